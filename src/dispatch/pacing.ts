// Per-account send pacing shared by every worker process: each account has a next free slot in
// the database; a worker reserves k consecutive slots 1/rate apart in one statement, so all
// workers together never exceed the account's throughput. Slot times are in database time.
import type { Db } from '../db/db.js';

/**
 * Slots per second for a cap: slightly under it (3 %, and at least one slot a second for low
 * caps), so that timer and network jitter never fit one slot too many into any one-second window.
 */
export function pacedRate(capMps: number): number {
  return capMps < 2 ? capMps * 0.97 : Math.min(capMps * 0.97, capMps - 1);
}

export type Reservation = { accountId: string; count: number; startMs: number; intervalMs: number; dbNowMs: number };

export async function reserveSlots(db: Pick<Db, 'query'>, wants: { accountId: string; count: number; mps: number }[]): Promise<Map<string, Reservation>> {
  if (wants.length === 0) return new Map();
  const intervals = wants.map((w) => 1000 / pacedRate(w.mps));
  const rows = await db.query<{ account_id: string; next_slot_at: Date; now: Date }>(
    `INSERT INTO account_pacing AS p (account_id, next_slot_at)
     SELECT t.a, now() + make_interval(secs => t.s) FROM unnest($1::uuid[], $2::float8[]) AS t(a, s)
     ON CONFLICT (account_id) DO UPDATE SET next_slot_at = greatest(p.next_slot_at, now()) + (excluded.next_slot_at - now())
     RETURNING account_id, next_slot_at, now() AS now`,
    [wants.map((w) => w.accountId), wants.map((w, i) => (w.count * intervals[i]!) / 1000)],
  );
  const out = new Map<string, Reservation>();
  for (const r of rows) {
    const i = wants.findIndex((w) => w.accountId === r.account_id);
    const w = wants[i]!;
    const intervalMs = intervals[i]!;
    out.set(r.account_id, { accountId: r.account_id, count: w.count, startMs: r.next_slot_at.getTime() - w.count * intervalMs, intervalMs, dbNowMs: r.now.getTime() });
  }
  return out;
}
