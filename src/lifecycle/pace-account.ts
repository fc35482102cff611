// An account's pacing row (account_pacing), which every worker process books its send slots from:
// its next free slot (dispatch/pacing.ts books it, a maintenance refusal pushes it back:
// dispatch/account-maintenance.ts) and its send pace after the provider's throughput refusal
// (130429; decision 0055; accounts/send-pace.ts). The lifecycle is the row's one writer.
import type { Db, Queryable } from '../db/db.js';

/** Each lowering halves the pace: the provider's window is a second, so a too-high pace shows at once. */
export const PACE_STEP_DOWN = 0.5;
/** The lowest pace: 1/32 of the ceiling (80 mps configured → 2.5; 1,000 → about 31, under the 80 of STANDARD). */
export const PACE_FLOOR = 1 / 32;
/** Refusals within this long of the last lowering do not lower again: they met sends booked before it. */
export const PACE_STEP_GUARD_S = 1;
/** With no refusal for this long, the pace climbs back PACE_RECOVERY_STEP, and again each such interval after. */
export const PACE_RECOVERY_INTERVAL_S = 10;
/** A tenth of the ceiling per quiet interval: from the floor back to full in under two minutes. */
export const PACE_RECOVERY_STEP = 0.1;

/**
 * The pace now (1: the full ceiling) of the pacing row aliased `p`, NULL-safe (no row or never
 * refused: 1). The row keeps the pace set at the last refusal and that refusal's time.
 */
export const currentPaceSql = (p: string) =>
  `coalesce(least(1, ${p}.pace + ${PACE_RECOVERY_STEP} * floor(greatest(0,
     extract(epoch FROM now() - ${p}.throttled_at)) / ${PACE_RECOVERY_INTERVAL_S})), 1)::float8`;

/**
 * Lowers the pace of each account the provider refused for throughput, in the outcome's
 * transaction; rows are taken in account id order (no deadlock with the booking statement or
 * another outcome batch). Returns the accounts whose pace was lowered (not those within the guard).
 */
export async function lowerSendPace(
  tx: Queryable,
  accountIds: string[],
): Promise<{ accountId: string; pace: number }[]> {
  if (accountIds.length === 0) return [];
  const ids = [...new Set(accountIds)].sort();
  // A new row starts at now(): its next slot is free at once, as an absent row's would be. `before`
  // (the statement's snapshot) tells which rows were lowered, for the metric only.
  const rows = await tx.query<{ account_id: string; pace: number; lowered: boolean }>(
    `WITH before AS (
       SELECT account_id, throttled_at FROM account_pacing WHERE account_id = ANY($1::uuid[])),
     up AS (
       INSERT INTO account_pacing AS p (account_id, next_slot_at, pace, throttled_at)
       SELECT a, now(), $2::float8, now() FROM unnest($1::uuid[]) AS a ORDER BY a
       ON CONFLICT (account_id) DO UPDATE SET
         pace = CASE WHEN p.throttled_at > now() - make_interval(secs => $4) THEN p.pace
                     ELSE greatest($3::float8, ${currentPaceSql('p')} * $2::float8) END,
         -- The time of the last lowering: a refusal within the guard leaves it, or refusals
         -- arriving more often than the guard would hold the pace at its first halving for good.
         throttled_at = CASE WHEN p.throttled_at > now() - make_interval(secs => $4) THEN p.throttled_at
                             ELSE now() END
       RETURNING p.account_id, p.pace)
     SELECT up.account_id, up.pace,
            coalesce(b.throttled_at <= now() - make_interval(secs => $4), true) AS lowered
       FROM up LEFT JOIN before b ON b.account_id = up.account_id`,
    [ids, PACE_STEP_DOWN, PACE_FLOOR, PACE_STEP_GUARD_S],
  );
  return rows.filter((r) => r.lowered).map((r) => ({ accountId: r.account_id, pace: Number(r.pace) }));
}

/**
 * A new ceiling (the operator's throughputMps, or the number's level read again) starts at full
 * pace: the fraction learned was of the old one.
 */
export async function resetSendPace(q: Queryable, accountId: string): Promise<void> {
  await q.query(
    `UPDATE account_pacing SET pace = 1, throttled_at = NULL WHERE account_id = $1 AND throttled_at IS NOT NULL`,
    [accountId],
  );
}

/**
 * Moves each account's next free send slot to `pauseMs` from now (never earlier than booked): no
 * worker books a slot of it before then (dispatch/pacing.ts reserveSlots), and later slots follow on.
 */
export async function pauseAccountSends(tx: Queryable, accountIds: string[], pauseMs: number): Promise<void> {
  if (accountIds.length === 0) return;
  await tx.query(
    `INSERT INTO account_pacing AS p (account_id, next_slot_at)
     SELECT a, now() + make_interval(secs => $2) FROM unnest($1::uuid[]) AS a ORDER BY a
     ON CONFLICT (account_id) DO UPDATE SET next_slot_at = greatest(p.next_slot_at, EXCLUDED.next_slot_at)`,
    [[...new Set(accountIds)].sort(), pauseMs / 1000],
  );
}

/**
 * Books `spans[i]` seconds of slots for account `ids[i]` (sorted: the upsert takes its rows in
 * account id order, so concurrent workers never deadlock on them) unless its schedule is already
 * booked past `horizonS` from now; an account's first booking creates its row. One statement, so
 * a row's lock is held for that statement only. Returns each booked account's new next free slot
 * and the database's now() (dispatch/pacing.ts reserveSlots turns them into slots).
 */
export async function bookSlots(
  db: Pick<Db, 'query'>,
  ids: string[],
  spans: number[],
  horizonS: number,
): Promise<{ account_id: string; next_slot_at: Date; db_now: Date }[]> {
  // EXCLUDED.next_slot_at is now() + the span to book, so the span is EXCLUDED.next_slot_at - now().
  return db.query<{ account_id: string; next_slot_at: Date; db_now: Date }>(
    `INSERT INTO account_pacing AS p (account_id, next_slot_at)
     SELECT t.a, now() + make_interval(secs => t.s) FROM unnest($1::uuid[], $2::float8[]) AS t(a, s) ORDER BY t.a
     ON CONFLICT (account_id) DO UPDATE SET next_slot_at = greatest(p.next_slot_at, now()) + (EXCLUDED.next_slot_at - now())
      WHERE greatest(p.next_slot_at, now()) <= now() + make_interval(secs => $3)
     RETURNING p.account_id, p.next_slot_at, now() AS db_now`,
    [ids, spans, horizonS],
  );
}
