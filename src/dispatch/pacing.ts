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

/** Slots are in epoch milliseconds of the database clock (the workers' clocks are assumed in sync). */
export type Reservation = { accountId: string; count: number; startMs: number; intervalMs: number };

/**
 * Reserves `count` consecutive slots for each account whose schedule is not already booked past
 * `horizonMs` from now (accounts left out are not reserved: their messages wait). The horizon
 * keeps every reserved slot well inside the claim's lease. Rows are locked in account id order,
 * so concurrent workers never deadlock on them.
 */
export async function reserveSlots(
  db: Pick<Db, 'transaction'>,
  wants: { accountId: string; count: number; mps: number }[],
  horizonMs: number,
): Promise<Map<string, Reservation>> {
  if (wants.length === 0) return new Map();
  const sorted = [...wants].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
  const intervals = new Map(sorted.map((w) => [w.accountId, 1000 / pacedRate(w.mps)]));
  const ids = sorted.map((w) => w.accountId);
  const rows = await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO account_pacing (account_id, next_slot_at) SELECT a, now() FROM unnest($1::uuid[]) AS a ORDER BY a ON CONFLICT DO NOTHING`,
      [ids],
    );
    await tx.query(
      'SELECT account_id FROM account_pacing WHERE account_id = ANY($1::uuid[]) ORDER BY account_id FOR UPDATE',
      [ids],
    );
    return tx.query<{ account_id: string; next_slot_at: Date }>(
      `UPDATE account_pacing p SET next_slot_at = greatest(p.next_slot_at, now()) + make_interval(secs => t.s)
         FROM unnest($1::uuid[], $2::float8[]) AS t(a, s)
        WHERE p.account_id = t.a AND greatest(p.next_slot_at, now()) <= now() + make_interval(secs => $3)
        RETURNING p.account_id, p.next_slot_at`,
      [ids, sorted.map((w) => (w.count * intervals.get(w.accountId)!) / 1000), horizonMs / 1000],
    );
  });
  const out = new Map<string, Reservation>();
  for (const r of rows) {
    const w = sorted.find((x) => x.accountId === r.account_id)!;
    const intervalMs = intervals.get(w.accountId)!;
    out.set(r.account_id, {
      accountId: r.account_id,
      count: w.count,
      startMs: r.next_slot_at.getTime() - w.count * intervalMs,
      intervalMs,
    });
  }
  return out;
}
