// A send's outcome that cannot be written (the database is away, the disk is full) is kept by the
// process that sent it and written again, its message's lease extended before each try, so no
// other worker claims a message that has already gone and sends it a second time (decision 0061).
// Only when this process dies does the lease run out, and the message is claimed again.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { type Claimed, extendLeases } from '../lifecycle/claim.js';

/** The first pause after a failed write, doubled after each failure up to the last. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 5_000;

export type KeptOutcomes = {
  db: Pick<Db, 'query'>;
  log: Logger;
  workerId: string;
  leaseSeconds: number;
  /** Counts outcomes written only after a failed write, and those given up (the lease was lost). */
  onKept?: (result: 'written' | 'lost') => void;
};

const messageIds = (m: Claimed) => ({ messageId: m.id, customerId: m.customerId, accountId: m.chatAccountId });

/**
 * Writes `write` until it succeeds. After a failure the lease is extended (a failed extension,
 * the database still away, is only logged) and the write is tried again after a pause. Stops
 * without writing when the lease is found held by another worker: the message is theirs now.
 */
export async function writeKept(k: KeptOutcomes, m: Claimed, write: () => Promise<void>): Promise<void> {
  let pauseMs = FIRST_PAUSE_MS;
  for (let tries = 1; ; tries++) {
    try {
      await write();
      if (tries > 1) {
        k.log.info({ ...messageIds(m), tries }, 'a kept send outcome was written');
        k.onKept?.('written');
      }
      return;
    } catch (err) {
      if (tries === 1)
        k.log.warn(
          { err, ...messageIds(m) },
          'recording a send outcome failed; kept in this process and written again, its lease extended meanwhile',
        );
    }
    if (!(await stillHeld(k, m))) {
      k.log.error(messageIds(m), 'a kept send outcome was not written: another worker holds the message now');
      k.onKept?.('lost');
      return;
    }
    await new Promise((r) => setTimeout(r, pauseMs));
    pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2);
  }
}

/** Extends the lease; true unless another worker holds the message (an error counts as held). */
async function stillHeld(k: KeptOutcomes, m: Claimed): Promise<boolean> {
  try {
    return (await extendLeases(k.db, k.workerId, [m.id], k.leaseSeconds)).has(m.id);
  } catch (err) {
    k.log.debug({ err, ...messageIds(m) }, 'extending the lease of a kept outcome failed; trying again');
    return true;
  }
}
