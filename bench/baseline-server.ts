// The baseline: a bare Fastify server that stores a row like ours for each POST /messages, with
// none of the service's logic (auth lookup, quota, idempotency checks, validation schema).
//   MODE=single  one INSERT per request
//   MODE=group   adaptive group commit: requests arriving while a batch is in flight go in the
//                next batch, one multi-row INSERT ... SELECT FROM unnest(...) per batch
// Database: DATABASE_URL (PostgreSQL) or PGlite under DATA_DIR/pgdata. Listens on 127.0.0.1:PORT.
import crypto from 'node:crypto';
import path from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';
import postgres from 'postgres';

type Store = {
  query(text: string, params?: unknown[]): Promise<unknown[]>;
  exec(text: string): Promise<void>;
  close(): Promise<void>;
};

async function openStore(): Promise<Store & { maxInFlight: number }> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const sql = postgres(url, { max: 20, onnotice: () => {} }); // our DB_POOL_SIZE default
    return {
      maxInFlight: 4,
      query: (text, params = []) => sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare: true }),
      exec: async (text) => void (await sql.unsafe(text)),
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const db = await PGlite.create(path.join(process.env.DATA_DIR ?? '.', 'pgdata'));
  return {
    maxInFlight: 1, // one connection: a second batch would only queue behind the first
    query: async (text, params) => (await db.query(text, params)).rows,
    exec: async (text) => void (await db.exec(text)),
    close: () => db.close(),
  };
}

// The columns and indexes that matter for an insert, as in our messages table.
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_messages (
    id          uuid PRIMARY KEY,
    customer_id uuid NOT NULL,
    external_id text NOT NULL,
    recipient   text NOT NULL,
    content     jsonb NOT NULL,
    status      text NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    due_at      timestamptz
  );
  CREATE UNIQUE INDEX IF NOT EXISTS bench_messages_external ON bench_messages (customer_id, external_id);
  CREATE INDEX IF NOT EXISTS bench_messages_due ON bench_messages (due_at) WHERE due_at IS NOT NULL;`;

type Row = {
  id: string;
  customerId: string;
  externalId: string;
  recipient: string;
  content: string;
  createdAt: string;
  expiresAt: string;
};

const INSERT_ONE = `
  INSERT INTO bench_messages (id, customer_id, external_id, recipient, content, status, created_at, expires_at, due_at)
  VALUES ($1, $2, $3, $4, $5::jsonb, 'pending', $6, $7, $6)`;
const INSERT_MANY = `
  INSERT INTO bench_messages (id, customer_id, external_id, recipient, content, status, created_at, expires_at, due_at)
  SELECT t.id, t.customer_id, t.external_id, t.recipient, t.content::jsonb, 'pending', t.created_at, t.expires_at, t.created_at
    FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::timestamptz[])
         AS t(id, customer_id, external_id, recipient, content, created_at, expires_at)`;

const store = await openStore();
await store.exec(SCHEMA);

const insertOne = (r: Row) =>
  store.query(INSERT_ONE, [r.id, r.customerId, r.externalId, r.recipient, r.content, r.createdAt, r.expiresAt]);
const insertMany = (rows: Row[]) =>
  store.query(INSERT_MANY, [
    rows.map((r) => r.id),
    rows.map((r) => r.customerId),
    rows.map((r) => r.externalId),
    rows.map((r) => r.recipient),
    rows.map((r) => r.content),
    rows.map((r) => r.createdAt),
    rows.map((r) => r.expiresAt),
  ]);

/**
 * Adaptive group commit: no timer; whatever queued up while batches were in flight goes next.
 * An idle committer starts the next batch on setImmediate, after the requests already read in
 * this turn of the event loop have queued. This matters on PGlite: its queries run in WebAssembly
 * and resolve through microtasks only, so while a batch is "in flight" no socket is ever read
 * and nothing could join it: starting at once would make every batch a single row.
 * GROUP_START=now starts at once instead (to show that effect).
 */
function groupCommit(flush: (rows: Row[]) => Promise<unknown>, maxInFlight: number, maxBatch = 500) {
  const queue: { row: Row; done: (err?: unknown) => void }[] = [];
  let inFlight = 0;
  let scheduled = false;
  const pump = () => {
    while (queue.length > 0 && inFlight < maxInFlight) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      flush(batch.map((p) => p.row))
        .then(
          () => batch.forEach((p) => p.done()),
          (err: unknown) => batch.forEach((p) => p.done(err)),
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };
  const startNow = process.env.GROUP_START === 'now';
  return (row: Row) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ row, done: (err) => (err === undefined ? resolve() : reject(err)) });
      if (startNow) pump();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          pump();
        });
      }
    });
}

const insert = process.env.MODE === 'group' ? groupCommit(insertMany, store.maxInFlight) : insertOne;

// The bench sends a few API keys; each stands for one customer here, with no lookup.
const customers = new Map<string, string>();
const customerOf = (key: string) => {
  let id = customers.get(key);
  if (id === undefined) customers.set(key, (id = crypto.randomUUID()));
  return id;
};

type Body = { externalId?: unknown; to?: { phoneE164?: unknown }; content?: unknown };

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/messages', async (request, reply) => {
  const key = request.headers['x-api-key'];
  const body = request.body as Body;
  if (
    typeof key !== 'string' ||
    typeof body?.externalId !== 'string' ||
    typeof body.to?.phoneE164 !== 'string' ||
    typeof body.content !== 'object'
  ) {
    return reply.code(400).send({ error: 'bad_request' });
  }
  const now = new Date();
  const row: Row = {
    id: crypto.randomUUID(),
    customerId: customerOf(key),
    externalId: body.externalId,
    recipient: body.to.phoneE164,
    content: JSON.stringify(body.content),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + 7 * 86400_000).toISOString(),
  };
  await insert(row);
  return reply.code(201).send({ messageId: row.id, externalId: row.externalId, status: 'pending', queued: true });
});

process.once('SIGTERM', () => {
  app
    .close()
    .then(() => store.close())
    .then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3100) });
