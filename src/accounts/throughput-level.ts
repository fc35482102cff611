// The number's throughput level (decision 0042): the provider's phone-number read says STANDARD
// (80 mps) or HIGH (1,000 mps). When the level read differs from the one last recorded, the
// account's pacing ceiling (throughput_mps) follows it; an operator's edit of throughputMps still
// wins until the level changes again.
import type { Queryable } from '../db/db.js';
import type { ThroughputLevel } from '../provider/phone-number.js';
import { updateThroughputLevel } from './account-store.js';
import { resetSendPace } from './send-pace.js';

/** Messages per second of each documented level (docs/provider-protocol-2026.md, "Throughput level"). */
export const THROUGHPUT_LEVEL_MPS: Record<ThroughputLevel, number> = { STANDARD: 80, HIGH: 1000 };

/** Records the level read; returns the new ceiling when it changed the account's, else null. */
export async function recordThroughputLevel(
  q: Queryable,
  accountId: string,
  level: ThroughputLevel,
): Promise<number | null> {
  const mps = await updateThroughputLevel(q, accountId, level, THROUGHPUT_LEVEL_MPS[level]);
  if (mps === null) return null;
  await resetSendPace(q, accountId);
  return mps;
}
