// The one retry-delay function, used by sends, webhook deliveries and account probes alike: the
// schedule's delay for this attempt, with ±jitter, scaled (RETRY_TIME_SCALE), never below a hint
// from the peer.

/** Delays after send attempt 1, 2, 3, 4 (a 5th failure is final with the default 5 attempts). */
export const SEND_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000] as const;

/** After a throughput rate limit (130429 and kin), which clears within about a second. */
export const THROTTLE_SCHEDULE_MS = [1_000, 2_000, 4_000, 8_000, 16_000] as const;

/** first, 2 × first, 4 × first … while below `capMs`, then `capMs` (the account probe's schedule). */
export function doublingScheduleMs(firstMs: number, capMs: number): number[] {
  const schedule: number[] = [];
  for (let d = firstMs; d < capMs; d *= 2) schedule.push(d);
  schedule.push(capMs);
  return schedule;
}

export type BackoffOptions = {
  /** Multiplies the whole delay (RETRY_TIME_SCALE). */
  scale: number;
  /** Fraction of randomness around the delay: 0.2 gives ±20 %. */
  jitter?: number;
  /** A lower bound asked for by the peer (Retry-After, pair-rate 4^X s), before scaling. */
  minMs?: number;
  random?: () => number;
};

/** Delay before the next try after `attempt` failed tries (attempt ≥ 1). */
export function backoffDelayMs(attempt: number, schedule: readonly number[], opts: BackoffOptions): number {
  const index = Math.min(Math.max(attempt, 1), schedule.length) - 1;
  const base = Math.max(schedule[index] ?? 0, opts.minMs ?? 0);
  const jitter = opts.jitter ?? 0.2;
  const factor = 1 + jitter * (2 * (opts.random ?? Math.random)() - 1);
  return Math.max(0, Math.round(base * factor * opts.scale));
}
