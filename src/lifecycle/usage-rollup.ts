// The daily usage rollup (usage_daily, read by GET /usage): each status a live message reaches
// counts once, on the UTC day it happened (provider time when known). Sandbox messages never count.
//
// `accepted` is counted by the intake, in its own transaction (create-messages.ts). The other four
// come from the message.status events the lifecycle writes anyway (decision 0078): such an event
// carries the account it counts for and its transaction's id (migration 046), and `rollUpUsage`
// adds the steps of the transactions that have ended since to usage_daily and moves the watermark,
// in one transaction. A receipt's or an outcome's transaction writes no rollup row.
// Readers add the rows and the events at or above the watermark (`USAGE_ROWS`, one statement:
// one snapshot), so a count is the same before and after the rollup that moves it.
import type { Db, Queryable } from '../db/db.js';
import type { ReceiptPricing } from '../provider/parse-webhook.js';

/** The statuses the rollup counts (a message's first reach of each); `accepted` is the intake's. */
export const COUNTED = ['sent', 'delivered', 'read', 'failed'] as const;

/**
 * The stripe of usage_daily a statement adds to: its connection's (migration 015). Concurrent
 * transactions on different connections never wait for each other on a rollup row; readers add the
 * stripes up. Use with USAGE_CONFLICT as the upsert's conflict target.
 */
export const USAGE_STRIPE = '(pg_backend_pid() % 8)::smallint';
export const USAGE_CONFLICT = '(customer_id, day, chat_account_id, stripe)';

/** Whether reaching `status` is a usage step (its event then carries the account: message-status-event.ts). */
export const isCounted = (status: string): boolean => (COUNTED as readonly string[]).includes(status);

/** An event's usage counters (one of them 1), its UTC day (the step's time) and account, as columns. */
const EVENT_STEP = `((e.data ->> 'timestamp')::timestamptz AT TIME ZONE 'UTC')::date AS day,
       e.usage_account AS chat_account_id, 0 AS accepted,
       ${COUNTED.map((c) => `(e.data ->> 'status' = '${c}')::int AS ${c}`).join(', ')}`;

/**
 * The usage rows as a relation to read from (`FROM ${USAGE_ROWS} AS u`): the rolled-up rows
 * (stripes not added up) and one row per counted event not rolled up yet, with the columns
 * customer_id, day (date), chat_account_id, accepted, sent, delivered, read, failed. Read in one
 * statement, so one snapshot: a rollup commits wholly before it or after it. A reader's conditions
 * on these columns are pushed down into both halves.
 */
export const USAGE_ROWS = `(
  SELECT customer_id, day, chat_account_id, accepted, ${COUNTED.join(', ')} FROM usage_daily
  UNION ALL
  SELECT e.customer_id, ${EVENT_STEP}
    FROM events e WHERE e.usage_tx >= (SELECT next_tx FROM usage_watermark))`;

/**
 * Adds the usage steps of every transaction that has ended since the last rollup to usage_daily
 * and moves the watermark past them, in one transaction (so each step counts exactly once).
 * Another process rolling up at the same moment makes this one a no-op. Returns the steps added.
 */
export async function rollUpUsage(db: Pick<Db, 'transaction'>): Promise<number> {
  return db.transaction(async (tx) => {
    // The lock first, in its own statement: the next statement's snapshot is taken after the
    // previous rollup committed, so it sees the watermark that rollup left and every step above.
    const [held] = await tx.query<{ ok: boolean }>('SELECT true AS ok FROM usage_watermark FOR UPDATE SKIP LOCKED');
    if (!held) return 0;
    // The watermark moves to the oldest transaction that may still write a step: the snapshot's
    // oldest in progress, except those another database's session is running (they cannot write
    // our events; on a shared server one left open elsewhere would otherwise hold the rollup
    // back), or to the snapshot's xmax when there is none. Every transaction below it has ended:
    // its events are visible in this statement's snapshot, or never will be.
    const [moved] = await tx.query<{ n: string }>(
      `WITH snap AS (SELECT pg_current_snapshot() AS s),
       elsewhere AS (SELECT backend_xid FROM pg_stat_activity WHERE datname <> current_database() AND backend_xid IS NOT NULL),
       w AS (
         SELECT u.next_tx AS lo,
                least(pg_snapshot_xmax(snap.s),
                      (SELECT min(x) FROM pg_snapshot_xip(snap.s) AS x WHERE x::xid NOT IN (SELECT backend_xid FROM elsewhere))) AS hi
           FROM usage_watermark u, snap),
       steps AS (
         -- The bounds as scalar subqueries: one index range scan of events_usage_tx.
         SELECT e.customer_id, ${EVENT_STEP}
           FROM events e WHERE e.usage_tx >= (SELECT lo FROM w) AND e.usage_tx < (SELECT hi FROM w)),
       added AS (
         INSERT INTO usage_daily AS u (customer_id, day, chat_account_id, sent, delivered, read, failed, stripe)
         SELECT customer_id, day, chat_account_id, ${COUNTED.map((c) => `sum(${c})`).join(', ')}, ${USAGE_STRIPE}
           FROM steps GROUP BY customer_id, day, chat_account_id ORDER BY customer_id, day, chat_account_id
         ON CONFLICT ${USAGE_CONFLICT} DO UPDATE SET
           sent = u.sent + EXCLUDED.sent, delivered = u.delivered + EXCLUDED.delivered,
           read = u.read + EXCLUDED.read, failed = u.failed + EXCLUDED.failed
         RETURNING 1),
       mark AS (UPDATE usage_watermark SET next_tx = w.hi FROM w WHERE w.hi > w.lo RETURNING 1)
       SELECT (SELECT count(*) FROM steps)::text AS n`,
    );
    return Number(moved?.n ?? 0);
  });
}

/** A message a receipt priced for the first time, with the receipt's time. */
export type PricedMessage = {
  customerId: string;
  accountId: string;
  sandbox: boolean;
  at: Date;
  pricing: ReceiptPricing;
};

/** The rollup's word for a receipt's `billable` flag (null: the receipt did not say). */
export const billableKey = (b: boolean | null) => (b === true ? 'billable' : b === false ? 'free' : 'unknown');

/**
 * Adds the messages a batch priced first to usage_pricing_daily (migration 024): by category and
 * billable flag, as the receipts said them (a category the receipt did not name is `unknown`).
 * One statement, its rows in key order, on this connection's stripe; nothing when none.
 */
export async function countPricing(tx: Queryable, priced: PricedMessage[]): Promise<void> {
  const rows = new Map<string, { k: string[]; n: number }>();
  for (const p of priced) {
    if (p.sandbox) continue;
    const k = [
      p.customerId,
      p.at.toISOString().slice(0, 10),
      p.accountId,
      p.pricing.category ?? 'unknown',
      billableKey(p.pricing.billable),
    ];
    const id = k.join('/');
    rows.set(id, { k, n: (rows.get(id)?.n ?? 0) + 1 });
  }
  if (rows.size === 0) return;
  const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  await tx.query(
    `INSERT INTO usage_pricing_daily AS u (customer_id, day, chat_account_id, category, billable, messages, stripe)
     SELECT *, ${USAGE_STRIPE} FROM unnest($1::uuid[], $2::date[], $3::uuid[], $4::text[], $5::text[], $6::int[])
     ON CONFLICT (customer_id, day, chat_account_id, category, billable, stripe)
     DO UPDATE SET messages = u.messages + EXCLUDED.messages`,
    [...[0, 1, 2, 3, 4].map((i) => sorted.map((r) => r.k[i])), sorted.map((r) => r.n)],
  );
}
