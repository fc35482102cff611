// The one quota algorithm of the intake, for sends and broadcasts alike: this month's quota rows
// of the charged customers are locked (created if missing) in customer id order, so intake
// transactions never deadlock, and their usage read; the asks are admitted in order, each while
// its customer's quota lasts (`admitByQuota`); what was admitted is charged (create-messages.ts
// chargeAndWake, whose limit in the WHERE then always holds). The usage read is the latest
// committed one and stays this transaction's until commit, so admitting by it cannot overshoot.
// A send is an ask of one message, so a batch is admitted in arrival order while the quota lasts
// (messages/insert-batch.ts, which inserts before it admits, so its excess rows are dropped);
// a broadcast is one ask of all its recipients, so every recipient or none
// (broadcasts/insert-broadcast.ts).
import type { Queryable } from '../db/db.js';
import type { AccountCount, QuotaCharge } from './create-messages.js';

/**
 * The statement (or CTE body) that locks the quota rows of month `month` of the customers
 * `customers` (SQL expressions: a date and a uuid[]) and returns `customer_id, used` of each.
 */
export const lockQuotaSql = (month: string, customers: string) => `
    INSERT INTO quota_usage AS q (customer_id, month)
    SELECT c, ${month}::date FROM unnest(${customers}::uuid[]) AS c ORDER BY c
    ON CONFLICT (customer_id, month) DO UPDATE SET used = q.used
    RETURNING customer_id, used`;

/** Locks these customers' quota rows of `month` (see lockQuotaSql); returns each one's usage. */
export async function lockQuota(tx: Queryable, customerIds: string[], month: string): Promise<Map<string, number>> {
  const rows = await tx.query<{ customer_id: string; used: number }>(lockQuotaSql('$1', '$2'), [
    month,
    [...new Set(customerIds)].sort(),
  ]);
  return new Map(rows.map((r) => [r.customer_id, Number(r.used)]));
}

/** `n` messages of one account asking for quota; `limit` null: never charged (a sandbox send). */
export type QuotaAsk = { customerId: string; chatAccountId: string; n: number; limit: number | null };

/** An ask admitted, or refused with its customer's usage at that point (what the 429 shows). */
export type QuotaVerdict = { admitted: true } | { admitted: false; limit: number; used: number };

/**
 * Admits the asks in order against the locked usage: an ask fits while its customer's usage, with
 * what was admitted before it, plus its own `n` stays within the limit. Returns each ask's verdict,
 * the charges of what was admitted per customer and the per-account counts of the day's usage
 * rollup (asks with no limit are admitted and counted in neither).
 */
export function admitByQuota(asks: QuotaAsk[], used: Map<string, number>) {
  const verdicts: QuotaVerdict[] = [];
  const charges = new Map<string, QuotaCharge>();
  const accounts = new Map<string, AccountCount>();
  for (const ask of asks) {
    if (ask.limit === null) {
      verdicts.push({ admitted: true });
      continue;
    }
    const charge = charges.get(ask.customerId) ?? { customerId: ask.customerId, n: 0, limit: ask.limit };
    const soFar = (used.get(ask.customerId) ?? 0) + charge.n;
    if (soFar + ask.n > ask.limit) {
      verdicts.push({ admitted: false, limit: ask.limit, used: soFar });
      continue;
    }
    charge.n += ask.n;
    charges.set(ask.customerId, charge);
    const k = `${ask.customerId}/${ask.chatAccountId}`;
    const count = accounts.get(k) ?? { customerId: ask.customerId, chatAccountId: ask.chatAccountId, n: 0 };
    count.n += ask.n;
    accounts.set(k, count);
    verdicts.push({ admitted: true });
  }
  return { verdicts, charges: [...charges.values()], accounts: [...accounts.values()] };
}

/** Drops message rows inserted in this transaction that were not admitted (a send batch's excess). */
export async function dropUnadmitted(tx: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await tx.query('DELETE FROM messages WHERE id = ANY($1::uuid[])', [ids]);
}
