// What the dispatcher tells its observers (src/shared/hooks.ts): each named event with its
// payload. The metrics and the worker's activity line subscribe in the composition root
// (src/app-workers.ts); nothing in dispatch/ knows who listens.
import type { AppliedChange, ChangeTally } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import type { Hooks } from '../shared/hooks.js';

export type DispatchEvents = {
  /** Messages that reached sent in one written batch. */
  sent: { count: number };
  /** Messages that ended failed in one written batch. */
  failed: { count: number };
  /** Messages queued again for another attempt in one written batch. */
  retried: { count: number };
  /** A message claimed while another worker's lease on it had expired (that worker died, hung or lost its database). */
  leaseTakeover: { message: Claimed; workerId: string };
  /** Booked sends whose timer fired too late: booked again under their claim, or returned to the queue. */
  lateSends: { outcome: 'rebooked' | 'returned'; count: number };
  /** Sends held back by their recipient's pair-rate pacing (decision 0037). */
  pairHeld: { count: number };
  /** A send outcome kept after a failed write: written later, or lost with the lease (decision 0061). */
  keptOutcome: { result: 'written' | 'lost' };
  /** Accounts whose send pace was lowered after the provider's 130429 (decision 0055). */
  paceLowered: { count: number };
  /** The portfolio messaging limit's refusals and the alert levels crossed (decision 0044). */
  portfolioLimit: { refused: number; crossings: number[] };
};

export type DispatchHooks = Hooks<DispatchEvents>;

/** The tally the lifecycle's logChanges takes, as events: sent, failed and retried counts of each batch. */
export function changeEvents(hooks: DispatchHooks): ChangeTally {
  return (changes: AppliedChange[]) => {
    let sent = 0;
    let failed = 0;
    let retried = 0;
    for (const c of changes) {
      if (c.to === 'sent') sent++;
      else if (c.to === 'failed') failed++;
      else if (c.retry) retried++;
    }
    if (sent > 0) hooks.emit('sent', { count: sent });
    if (failed > 0) hooks.emit('failed', { count: failed });
    if (retried > 0) hooks.emit('retried', { count: retried });
  };
}
