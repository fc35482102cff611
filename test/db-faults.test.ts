// PostgreSQL only (issue #32, decision 0059): the database seam under the faults of a real
// deployment, injected by a TCP proxy between the service and PostgreSQL (test/support/fault-proxy.ts).
// - the seam: a connection that missed its deadline, or reported a fault, is destroyed and never
//   reused; an ordinary SQL error keeps it; a transaction has a deadline of its own;
// - the service: every connection reset while requests are in flight (a failover), and a stall (a
//   partition): each request is answered (201, or 503 database_unavailable by the deadline), never
//   left hanging nor answered 500, and the service accepts and sends again afterwards.
// PGlite has no connection to lose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../src/db/db.js';
import { DatabaseDeadlineError, databaseFault } from '../src/db/db-errors.js';
import { dbDeadlines } from '../src/db/open-db.js';
import { openPostgresDb } from '../src/db/postgres-db.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import {
  backend,
  call,
  createTenant,
  createTestDatabase,
  eventually,
  type Service,
  startService,
  type Tenant,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';

const PID = 'SELECT pg_backend_pid() AS pid';
const pidOf = async (db: Pick<Db, 'query'>) => (await db.query<{ pid: number }>(PID))[0]!.pid;

async function proxyTo(url: string): Promise<FaultProxy> {
  const u = new URL(url);
  return startFaultProxy({ host: u.hostname, port: Number(u.port || 5432) });
}

describe.skipIf(backend !== 'postgres')('the database seam under faults (postgres)', () => {
  let database: TestDatabase;
  let proxy: FaultProxy;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await proxyTo(database.url!);
    // One connection: a reused one would show as the same server process.
    db = await openPostgresDb(proxy.via(database.url!), 1, {
      deadlines: { statementMs: 300, transactionMs: 600, connectMs: 1_000 },
    });
  });
  afterAll(async () => {
    await db.close();
    await proxy.close();
    await database.drop();
  });
  const serverHas = async (pid: number) =>
    (await database.db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length > 0;

  it('destroys a connection that missed its deadline, and answers on a new one', async () => {
    const before = await pidOf(db);
    proxy.setMode({ kind: 'stall' });
    const missed = await db.query('SELECT 1').catch((err: unknown) => err);
    expect(missed).toBeInstanceOf(DatabaseDeadlineError);
    expect(databaseFault(missed)).toBe('deadline');
    proxy.setMode({ kind: 'pass' });
    const after = await pidOf(db);
    expect(after).not.toBe(before);
    // The old one is closed (the server sees it go), not idling in the pool.
    await eventually(async () => !(await serverHas(before)));
  });

  it('destroys a connection that was reset, and keeps one that answered an ordinary SQL error', async () => {
    const first = await pidOf(db);
    const sqlError = await db.query('SELECT 1 / 0').catch((err: unknown) => err);
    expect((sqlError as { code?: string }).code).toBe('22012');
    expect(await pidOf(db)).toBe(first);

    proxy.resetAll();
    // The pool learns of the reset from the socket, or from the next statement (then a fault, 503).
    const next = await db.query(PID).catch((err: unknown) => err);
    if (next instanceof Error) expect(databaseFault(next)).toBe('connection');
    expect(await pidOf(db)).not.toBe(first);
  });

  it("keeps the connection of a transaction that failed in the caller's code and rolled back", async () => {
    await database.db.exec('CREATE TABLE IF NOT EXISTS fault_probe (n int)');
    const before = await pidOf(db);
    const refused = new Error('refused by the caller');
    const failed = await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO fault_probe (n) VALUES (2)');
        throw refused;
      })
      .catch((err: unknown) => err);
    expect(failed).toBe(refused);
    expect(await pidOf(db)).toBe(before);
    expect(await database.db.query('SELECT n FROM fault_probe WHERE n = 2')).toEqual([]);
  });

  it('bounds a whole transaction: past its deadline it fails, rolls back and its connection is destroyed', async () => {
    await database.db.exec('CREATE TABLE IF NOT EXISTS fault_probe (n int)');
    const before = await pidOf(db);
    const missed = await db
      .transaction(async (tx) => {
        await tx.query('INSERT INTO fault_probe (n) VALUES (1)');
        // Each statement is within its own bound (300 ms); together they pass the transaction's (600 ms).
        for (let i = 0; i < 10; i++) await tx.query('SELECT pg_sleep(0.15)');
      })
      .catch((err: unknown) => err);
    expect(missed).toBeInstanceOf(DatabaseDeadlineError);
    expect(await pidOf(db)).not.toBe(before);
    await eventually(async () => !(await serverHas(before)));
    expect(await database.db.query('SELECT n FROM fault_probe')).toEqual([]);
  });

  it("has the server cancel a statement past statement_timeout (the connection's own bound)", async () => {
    const err = await db.query('SELECT pg_sleep(2)').catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('57014');
    expect(databaseFault(err)).toBe('deadline');
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

/** What a POST /messages answered: its status and error code, or 'hung' past `boundMs`. */
async function post(svc: Service, key: string, externalId: string, boundMs: number) {
  const res = await fetch(`${svc.url}/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(textMessage(externalId)),
    signal: AbortSignal.timeout(boundMs),
  }).catch(() => null);
  if (res === null) return { status: 'hung' as const, error: null, retryAfter: null };
  const body = (await res.json()) as { error?: string };
  return { status: res.status, error: body.error ?? null, retryAfter: res.headers.get('retry-after') };
}

describe.skipIf(backend !== 'postgres')('the service through a failing connection to PostgreSQL', () => {
  let database: TestDatabase;
  let proxy: FaultProxy;
  let svc: Service;
  let t: Tenant;
  // Short bounds, set as an operator would: every database call of a request is over in about a second.
  const env = {
    DATABASE_STATEMENT_TIMEOUT_MS: '500',
    DATABASE_TRANSACTION_TIMEOUT_MS: '1000',
    DATABASE_CONNECT_TIMEOUT_MS: '1000',
  };
  // Far above those bounds (a loaded machine), far below "hung until the client gave up".
  const ANSWER_BOUND_MS = 20_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await proxyTo(database.url!);
    const config = testConfig(env);
    const db = await openPostgresDb(proxy.via(database.url!), config.dbPoolSize, { deadlines: dbDeadlines(config) });
    // The service's database goes through the proxy; the test's own (database.db) does not.
    svc = await startService({ env, database: { db, url: proxy.via(database.url!), drop: () => db.close() } });
    t = await createTenant(svc.url);
  });
  afterAll(async () => {
    await svc?.stop();
    await svc?.db.close().catch(() => {});
    await proxy?.close();
    await database?.drop();
  });

  const expectAnswered = (answers: Awaited<ReturnType<typeof post>>[]) => {
    for (const a of answers) {
      expect(a.status === 201 || (a.status === 503 && a.error === 'database_unavailable'), JSON.stringify(a)).toBe(
        true,
      );
      if (a.status === 503) expect(a.retryAfter).not.toBeNull();
    }
  };

  /** A new message is accepted (201 once the pool has new connections) and then sent. */
  async function acceptsAndSends(externalId: string) {
    const id = await eventually(async () => {
      const res = await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage(externalId) });
      return res.status === 201 || res.status === 200 ? (res.body.messageId as string) : undefined;
    });
    await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).body;
      return m.status !== 'queued' && m.status !== 'failed';
    });
  }

  it('answers every request in flight when all connections are reset, then accepts and sends again', async () => {
    let firstAnswered!: () => void;
    const flowing = new Promise<void>((r) => (firstAnswered = r));
    const inFlight = Array.from({ length: 150 }, (_, i) =>
      post(svc, t.sandboxKey, `reset-${i}`, ANSWER_BOUND_MS).finally(firstAnswered),
    );
    await flowing; // the database work of the burst is under way
    proxy.resetAll();
    const answers = await Promise.all(inFlight);
    expectAnswered(answers);
    await acceptsAndSends('after-reset');
  });

  it('answers requests made during a stall by the deadline (503), and none 5xx once it ends', async () => {
    proxy.setMode({ kind: 'stall' });
    const during = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(svc, t.sandboxKey, `stall-${i}`, ANSWER_BOUND_MS)),
    );
    // All answered while the stall still held: by the deadline.
    expect(during.map((a) => [a.status, a.error])).toEqual(during.map(() => [503, 'database_unavailable']));
    proxy.setMode({ kind: 'pass' });
    await acceptsAndSends('after-stall');
    const after = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(svc, t.sandboxKey, `after-stall-${i}`, ANSWER_BOUND_MS)),
    );
    expect(after.map((a) => a.status)).toEqual(after.map(() => 201));
  });
});
