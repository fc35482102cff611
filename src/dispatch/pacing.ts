// Per-account send pacing shared by every worker process: each account has a next free slot in
// the database; a worker reserves k consecutive slots 1/rate apart in one statement, so all
// workers together never exceed the account's throughput. Slots are booked in the database's
// clock and handed to the caller in this process's clock (DbClock), whose timers fire them.
import type { Db } from '../db/db.js';
import { bookSlots } from '../lifecycle/pace-account.js';

/**
 * Slots per second for a cap: slightly under it (3 %, and at least one slot a second for low
 * caps), so that timer and network jitter never fit one slot too many into any one-second window.
 */
export function pacedRate(capMps: number): number {
  return capMps < 2 ? capMps * 0.97 : Math.min(capMps * 0.97, capMps - 1);
}

/** Slots in epoch milliseconds of this process's clock (converted from the database's by DbClock). */
export type Reservation = { accountId: string; count: number; startMs: number; intervalMs: number };

/** How long a sample of the clock offset is trusted before any newer one replaces it. */
const OFFSET_SAMPLE_TTL_MS = 60_000;

/**
 * The offset of the database's clock from this process's, read from the booking statements
 * themselves (their now()): a host whose clock is off from the database server's would otherwise
 * fire every slot early or late by the difference, over the slots other workers fire on time
 * (decision 0031). The sample with the shortest round trip is kept (its error is at most half of
 * it), replaced by any sample once it is a minute old, so a drifting clock is followed.
 */
export type DbClock = {
  /** One booking: the database's now() and this process's clock before and after the statement. */
  sample(dbNowMs: number, sentAtMs: number, answeredAtMs: number): void;
  /** Database time minus process time, in ms (0 until the first sample). */
  offsetMs(): number;
};

export function createDbClock(): DbClock {
  let best: { offsetMs: number; roundTripMs: number; at: number } | null = null;
  return {
    sample(dbNowMs, sentAtMs, answeredAtMs) {
      const roundTripMs = Math.max(0, answeredAtMs - sentAtMs);
      const offsetMs = dbNowMs - (sentAtMs + roundTripMs / 2);
      if (!best || roundTripMs <= best.roundTripMs || answeredAtMs - best.at > OFFSET_SAMPLE_TTL_MS)
        best = { offsetMs, roundTripMs, at: answeredAtMs };
    },
    offsetMs: () => best?.offsetMs ?? 0,
  };
}

/**
 * Reserves `count` consecutive slots for each account whose schedule is not already booked past
 * `horizonMs` from now (accounts left out are not reserved: their messages wait). The horizon
 * keeps every reserved slot well inside the claim's lease.
 *
 * One statement, so a row's lock is held for that statement only (a transaction of several round
 * trips held every account of a claim batch locked while the event loop was busy elsewhere: the
 * largest lock wait under load). The upsert takes its rows in account id order, so concurrent
 * workers never deadlock on them; an account's first reservation creates its row.
 */
export async function reserveSlots(
  db: Pick<Db, 'query'>,
  wants: { accountId: string; count: number; mps: number }[],
  horizonMs: number,
  clock: DbClock,
): Promise<Map<string, Reservation>> {
  if (wants.length === 0) return new Map();
  const byAccount = new Map<string, { count: number; intervalMs: number }>();
  for (const w of wants) byAccount.set(w.accountId, { count: w.count, intervalMs: 1000 / pacedRate(w.mps) });
  const ids = [...byAccount.keys()].sort();
  // The lifecycle's booking statement (lifecycle/pace-account.ts); each account's span in seconds.
  const sentAtMs = Date.now();
  const rows = await bookSlots(
    db,
    ids,
    ids.map((id) => (byAccount.get(id)!.count * byAccount.get(id)!.intervalMs) / 1000),
    horizonMs / 1000,
  );
  if (rows.length > 0) clock.sample(new Date(rows[0]!.db_now).getTime(), sentAtMs, Date.now());
  const offsetMs = clock.offsetMs();
  const out = new Map<string, Reservation>();
  for (const r of rows) {
    const { count, intervalMs } = byAccount.get(r.account_id)!;
    out.set(r.account_id, {
      accountId: r.account_id,
      count,
      startMs: new Date(r.next_slot_at).getTime() - offsetMs - count * intervalMs,
      intervalMs,
    });
  }
  return out;
}
