// The reset and stall drills at the driver level (issue #32, decision 0059): a pool of the driver
// under test talks to PostgreSQL through the fault proxy; statements and transactions are in flight
// when every connection is reset (or stalled); then it counts what settled, how, and what is still
// pending after a wait, and whether the pool answers again.
//   DRILL_DRIVER=postgres|pg|seam (seam: our Db, src/db/postgres-db.ts)  DRILL_OPS (200)  DRILL_WAIT_MS (10000)
import { openPostgresDb } from '../src/db/postgres-db.js';
import { startFaultProxy } from '../test/support/fault-proxy.js';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const driver = process.env.DRILL_DRIVER ?? 'postgres';
const ops = Number(process.env.DRILL_OPS ?? 200);
const waitMs = Number(process.env.DRILL_WAIT_MS ?? 10_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Pool = {
  query(text: string): Promise<unknown>;
  transaction(texts: string[]): Promise<unknown>;
  end(): Promise<void>;
};

async function open(target: string): Promise<Pool> {
  if (driver === 'postgres') {
    const { default: postgres } = await import('postgres');
    const sql = postgres(target, { max: 10, onnotice: () => {} });
    return {
      query: (text) => sql.unsafe(text),
      transaction: (texts) =>
        sql.begin(async (tx) => {
          for (const t of texts) await tx.unsafe(t);
        }),
      end: () => sql.end({ timeout: 1 }),
    };
  }
  if (driver === 'pg') {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: target, max: 10 });
    pool.on('error', () => {});
    return {
      query: (text) => pool.query(text),
      async transaction(texts) {
        const c = await pool.connect();
        c.on('error', () => {}); // the seam listens the same way: an error is seen by the query
        try {
          await c.query('BEGIN');
          for (const t of texts) await c.query(t);
          await c.query('COMMIT');
          c.release();
        } catch (err) {
          c.release(err as Error);
          throw err;
        }
      },
      end: () => pool.end(),
    };
  }
  const deadlineMs = Number(process.env.DRILL_DEADLINE_MS ?? 2000);
  const db = await openPostgresDb(target, 10, {
    deadlines: { statementMs: deadlineMs, transactionMs: deadlineMs, connectMs: deadlineMs },
  });
  return {
    query: (text) => db.query(text),
    transaction: (texts) =>
      db.transaction(async (tx) => {
        for (const t of texts) await tx.query(t);
      }),
    end: () => db.close(),
  };
}

/** Fires `ops` operations (half statements, half transactions), applies the fault, waits, counts. */
async function drill(pool: Pool, fault: () => void, lift: () => void, label: string) {
  const outcome = new Map<string, number>();
  let pending = 0;
  const note = (k: string) => outcome.set(k, (outcome.get(k) ?? 0) + 1);
  const started = Date.now();
  let lastSettledAt = 0;
  const all = Array.from({ length: ops }, (_, i) => {
    pending++;
    const p =
      i % 2 === 0
        ? pool.query('SELECT pg_sleep(0.05)')
        : pool.transaction(['SELECT 1', 'SELECT pg_sleep(0.05)', 'SELECT 2']);
    return p
      .then(
        () => note('ok'),
        (err: { code?: string; message?: string }) => note(`error ${err.code ?? err.message?.slice(0, 40)}`),
      )
      .finally(() => {
        pending--;
        lastSettledAt = Date.now() - started;
      });
  });
  await sleep(30);
  fault();
  const until = Date.now() + waitMs;
  while (pending > 0 && Date.now() < until) await sleep(50);
  const stuck = pending;
  lift();
  const t0 = Date.now();
  let after = 'ok';
  try {
    await Promise.race([pool.query('SELECT 1'), sleep(waitMs).then(() => Promise.reject(new Error('no answer')))]);
  } catch (err) {
    after = `error ${(err as { code?: string }).code ?? (err as Error).message}`;
  }
  console.log(
    JSON.stringify({
      driver,
      drill: label,
      ops,
      outcomes: Object.fromEntries(outcome),
      pendingAfterWaitMs: { waitMs, stuck },
      lastSettledMs: lastSettledAt,
      firstQueryAfter: { result: after, ms: Date.now() - t0 },
      unhandledRejections: unhandled,
    }),
  );
  void Promise.allSettled(all);
}

// Counted, not fatal: a driver that rejects a promise nobody holds is one of the findings.
let unhandled = 0;
process.on('unhandledRejection', (err) => {
  unhandled++;
  if (unhandled === 1) console.log('unhandled rejection:', (err as Error).stack);
});
const proxy = await startFaultProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
const pool = await open(proxy.via(url));
await pool.query('SELECT 1');
await drill(
  pool,
  () => proxy.resetAll(),
  () => {},
  'reset',
);
await drill(
  pool,
  () => proxy.setMode({ kind: 'stall' }),
  () => proxy.setMode({ kind: 'pass' }),
  'stall',
);
await Promise.race([pool.end(), sleep(3000)]);
await proxy.close();
process.exit(0);
