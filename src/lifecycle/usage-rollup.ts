// The daily usage rollup (usage_daily, read by GET /usage) kept up by the lifecycle: each status a
// live message reaches counts once, on the UTC day it happened (provider time when known), in one
// set-based upsert per batch, in the transaction of the change itself. Sandbox messages never count.
import type { Queryable } from '../db/db.js';
import type { ReceiptPricing } from '../provider/parse-webhook.js';
import type { MessageStatus } from '../shared/vocab.js';

/** The statuses the rollup counts (a message's first reach of each); `accepted` is the intake's. */
const COUNTED = ['sent', 'delivered', 'read', 'failed'] as const;
type Counted = (typeof COUNTED)[number];

/** One status a message reached. */
export type UsageStep = { customerId: string; accountId: string; sandbox: boolean; to: MessageStatus; at: Date };

/**
 * The stripe of usage_daily a statement adds to: its connection's (migration 015). Concurrent
 * transactions on different connections never wait for each other on a rollup row; readers add the
 * stripes up. Use with USAGE_CONFLICT as the upsert's conflict target.
 */
export const USAGE_STRIPE = '(pg_backend_pid() % 8)::smallint';
export const USAGE_CONFLICT = '(customer_id, day, chat_account_id, stripe)';

const isCounted = (s: MessageStatus): s is Counted => (COUNTED as readonly string[]).includes(s);

/**
 * Adds a batch's steps to the rollup: one statement, its rows in key order (two batches touching
 * the same rows lock them in one order, so they never deadlock on them). Call it last in the
 * transaction, after the messages' own rows are changed.
 */
export async function countSteps(tx: Queryable, steps: UsageStep[]): Promise<void> {
  const rows = new Map<string, { customerId: string; day: string; accountId: string; n: Record<Counted, number> }>();
  for (const s of steps) {
    if (s.sandbox || !isCounted(s.to)) continue;
    const day = s.at.toISOString().slice(0, 10);
    const k = `${s.customerId}/${day}/${s.accountId}`;
    const row = rows.get(k) ?? {
      customerId: s.customerId,
      day,
      accountId: s.accountId,
      n: { sent: 0, delivered: 0, read: 0, failed: 0 },
    };
    row.n[s.to] += 1;
    rows.set(k, row);
  }
  if (rows.size === 0) return;
  const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  await tx.query(
    `INSERT INTO usage_daily AS u (customer_id, day, chat_account_id, sent, delivered, read, failed, stripe)
     SELECT *, ${USAGE_STRIPE} FROM unnest($1::uuid[], $2::date[], $3::uuid[], $4::int[], $5::int[], $6::int[], $7::int[])
     ON CONFLICT ${USAGE_CONFLICT} DO UPDATE SET
       sent = u.sent + EXCLUDED.sent, delivered = u.delivered + EXCLUDED.delivered,
       read = u.read + EXCLUDED.read, failed = u.failed + EXCLUDED.failed`,
    [
      sorted.map((r) => r.customerId),
      sorted.map((r) => r.day),
      sorted.map((r) => r.accountId),
      ...COUNTED.map((c) => sorted.map((r) => r.n[c])),
    ],
  );
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
