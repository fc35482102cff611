// npm run bench, part 3: event delivery to webhook endpoints on PostgreSQL. Events and their
// deliveries are written through the outbox with the worker stopped; one worker process then
// delivers them to a fast local receiver (target ≥ 4,000 events/s), and again with one extra
// endpoint that never answers (the others' rate must drop by less than 10 %).
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import postgres from 'postgres';

import { migrate } from '../src/db/migrate.js';
import { openPostgresDb } from '../src/db/postgres-db.js';
import { writeEvents } from '../src/lifecycle/write-events.js';
import { createSealer } from '../src/shared/crypto.js';
import { createDatabase } from './databases.js';
import { freePort, memoryMb, startTs, stop, stopAll, waitHealthy } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20000);
const CUSTOMERS = 10;
const keyBytes = crypto.randomBytes(32);
const ENCRYPTION_KEY = keyBytes.toString('base64');

async function scenario(withDeadEndpoint: boolean) {
  const db = await createDatabase('postgres', adminUrl);
  const sql = postgres(db.env.DATABASE_URL!, { max: 4, onnotice: () => {} });
  const fastPort = await freePort();
  const deadPort = await freePort();
  const fast = startTs('receiver-fast', path.join(here, 'receiver-server.ts'), {
    PORT: String(fastPort),
    MODE: 'fast',
  });
  const dead = startTs('receiver-dead', path.join(here, 'receiver-server.ts'), {
    PORT: String(deadPort),
    MODE: 'dead',
  });
  const common = {
    ...db.env,
    ENCRYPTION_KEY,
    UNSAFE_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    WORKER_BATCH_SIZE: '500',
    DB_POOL_SIZE: '10',
  };
  let worker = null;
  try {
    await waitHealthy(fast, `http://127.0.0.1:${fastPort}`);
    const appDb = await openPostgresDb(db.env.DATABASE_URL!, 4);
    await migrate(appDb);
    const sealer = createSealer(keyBytes);
    const customers = Array.from({ length: CUSTOMERS }, () => crypto.randomUUID());
    for (const id of customers) {
      await sql`INSERT INTO customers (id, name, plan) VALUES (${id}, 'bench', 'pro')`;
      const endpointId = crypto.randomUUID();
      const secret = sealer.seal('whsec_bench', { table: 'webhook_endpoints', column: 'secret_enc', id: endpointId });
      await sql`INSERT INTO webhook_endpoints (id, customer_id, url, events, secret_enc) VALUES (${endpointId}, ${id}, ${`http://127.0.0.1:${fastPort}/hook`}, ${['message.status']}, ${secret})`;
    }
    if (withDeadEndpoint) {
      const endpointId = crypto.randomUUID();
      const secret = sealer.seal('whsec_bench', { table: 'webhook_endpoints', column: 'secret_enc', id: endpointId });
      await sql`INSERT INTO webhook_endpoints (id, customer_id, url, events, secret_enc) VALUES (${endpointId}, ${customers[0]!}, ${`http://127.0.0.1:${deadPort}/hook`}, ${['message.status']}, ${secret})`;
    }
    // The events, through the same outbox statement the service uses.
    for (let i = 0; i < EVENTS; i += 1000) {
      await appDb.transaction((tx) =>
        writeEvents(
          tx,
          Array.from({ length: Math.min(1000, EVENTS - i) }, (_, j) => ({
            customerId: customers[(i + j) % CUSTOMERS]!,
            type: 'message.status' as const,
            createdAt: new Date(),
            data: {
              messageId: crypto.randomUUID(),
              externalId: `e-${i + j}`,
              status: 'sent',
              previousStatus: 'queued',
              channel: 'chat_official',
              recipient: '+15551234567',
              chatAccountId: crypto.randomUUID(),
              timestamp: new Date().toISOString(),
              error: null,
            },
          })),
        ),
      );
    }
    await appDb.close();
    worker = startTs('chatgate-worker', path.join(here, 'serve-chatgate.ts'), { ...common, BENCH_ROLE: 'worker' });
    const deadline = Date.now() + 180_000;
    let counts = { count: 0, first: 0, last: 0 };
    while (Date.now() < deadline) {
      counts = (await (await fetch(`http://127.0.0.1:${fastPort}/__count`)).json()) as typeof counts;
      if (counts.count >= EVENTS) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const rss = memoryMb(worker.pid);
    const rate = Math.round((counts.count * 1000) / Math.max(1, counts.last - counts.first));
    return { withDeadEndpoint, events: EVENTS, delivered: counts.count, eventsPerSec: rate, workerRssMb: rss.rssMb };
  } finally {
    if (worker) await stop(worker, 3000);
    await stop(fast);
    await stop(dead);
    await stopAll();
    await sql.end({ timeout: 1 });
    await db.drop();
  }
}

const healthy = await scenario(false);
const withDead = await scenario(true);
console.log('\nWebhook delivery (PostgreSQL, one worker process, local receiver):');
console.log(JSON.stringify({ healthy, withDead }, null, 2));
const drop = 1 - withDead.eventsPerSec / healthy.eventsPerSec;
console.log(
  `delivery:        ${healthy.eventsPerSec} events/s (target ≥ 4000): ${healthy.eventsPerSec >= 4000 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `dead endpoint:   ${withDead.eventsPerSec} events/s to the others, ${(drop * 100).toFixed(1)} % lower (target < 10 %): ${drop < 0.1 ? 'PASS' : 'FAIL'}`,
);
