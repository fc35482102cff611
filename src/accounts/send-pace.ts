// An account's send pace after the provider's throughput refusal (130429: the number's real
// throughput exceeded; decision 0055). The pace is a fraction of the account's ceiling
// (throughput_mps): each 130429 halves it (at most once a second, down to a floor), and it climbs
// back a step every quiet interval with no refusal. Kept in the account's pacing row
// (account_pacing), which every worker process books its slots from, so all of them slow down
// together; the climb back is computed from the time of the last refusal, with no loop to run it.
export {
  currentPaceSql,
  lowerSendPace,
  PACE_FLOOR,
  PACE_RECOVERY_INTERVAL_S,
  PACE_RECOVERY_STEP,
  PACE_STEP_DOWN,
  PACE_STEP_GUARD_S,
  resetSendPace,
} from '../lifecycle/pace-account.js';

/** The rate an account's slots are booked at now: its ceiling times its pace, never under 1 mps (or the ceiling). */
export function pacedMps(account: { throughputMps: number; sendPace: number }): number {
  return Math.max(Math.min(1, account.throughputMps), account.throughputMps * account.sendPace);
}
