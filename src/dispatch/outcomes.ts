// Recording what the live path did: many messages' outcomes in one transaction — their
// transitions (with their events), the receipts they unpark, and the accounts to mark after an
// account-level provider error.
import type { Logger } from 'pino';

import { markAccountError } from '../accounts/send-accounts.js';
import { lowerSendPace } from '../accounts/send-pace.js';
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyParkedReceipts } from '../lifecycle/apply-receipt.js';
import { type AppliedChange, applyTransitions, type ChangeTally, logChanges } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import { pauseAccountSends } from '../lifecycle/pace-account.js';
import { learnPairLimits } from '../lifecycle/pace-recipient.js';
import { recordMarketingRoutes } from '../lifecycle/record-routes.js';
import { type AccountStatus, SEND_ERROR_CODES } from '../shared/vocab.js';
import { addSuppressions } from '../suppressions/suppression-store.js';
import type { AttemptResult } from './live-send.js';

export type Outcome = { result: AttemptResult; message: Claimed };

/**
 * A lost outcome is a message sent and not recorded (its lease expires and it is sent again): a
 * batch that loses a deadlock or a serialization race is tried again, after a short random pause,
 * up to 10 times.
 */
const retryOutcomes = <T>(fn: () => Promise<T>) => retryTransient(fn, 10, 10);

type AccountMark = { customerId: string; status: AccountStatus; errorCode: string };

/** Writes a batch of outcomes; returns when each message is due again. */
export async function writeOutcomes(
  deps: {
    db: Db;
    log: Logger;
    invalidateCustomer: (tx: Queryable, customerId: string) => Promise<void>;
    /** An account was marked: this process stops firing its booked sends. */
    onMarked: (accountId: string) => void;
    /** When an account marked after a rejected token is first probed (scaled; see accounts/account-prober.ts). */
    firstAccountProbeDelayMs: number;
    /** The first spacing of a recipient the provider limited (131056); see recipient-pacing.ts. */
    pairSpacingMs: number;
    /** A pair was paced here: the dispatcher stops skipping its pacing check. */
    onPairLearned: () => void;
    /** How long an account's sends pause after the provider's maintenance refusal (131057; decision 0042). */
    maintenancePauseMs: number;
    /** Told of the changes written (the worker's activity line). */
    tally?: ChangeTally;
    /** Accounts paused here: their throughput level is read again when the pause ends. */
    onPaused: (accountIds: string[]) => void;
    /** Accounts whose send pace was lowered here after a 130429 (decision 0055), with their new pace. */
    onSlowed: (slowed: { accountId: string; pace: number }[]) => void;
  },
  workerId: string,
  items: Outcome[],
): Promise<(Date | null)[]> {
  const marks = accountMarks(items);
  const paused = [
    ...new Set(
      items
        .filter((o) => o.result.verdict?.action === 'retry' && o.result.verdict.pausesAccount)
        .map((o) => o.message.chatAccountId),
    ),
  ];
  const throttled = items
    .filter((o) => o.result.verdict?.action === 'retry' && o.result.verdict.slowsAccount)
    .map((o) => o.message.chatAccountId);
  let changes: AppliedChange[] = [];
  let slowed: { accountId: string; pace: number }[] = [];
  await retryOutcomes(() =>
    deps.db.transaction(async (tx) => {
      changes = await applyTransitions(
        tx,
        workerId,
        items.map((o) => o.result.transition),
      );
      await keepMarketingRoutes(tx, items, changes);
      const wamids = items.flatMap((o) =>
        o.result.transition.providerMessageId ? [o.result.transition.providerMessageId] : [],
      );
      if (wamids.length > 0) await applyParkedReceipts(tx, wamids);
      await addSuppressions(tx, optOuts(items));
      await learnPairLimits(tx, pairLimited(items), deps.pairSpacingMs);
      await pauseAccountSends(tx, paused, deps.maintenancePauseMs);
      slowed = await lowerSendPace(tx, throttled);
      for (const [accountId, mark] of [...marks].sort(([a], [b]) => (a < b ? -1 : 1))) {
        await markAccountError(tx, accountId, mark.status, mark.errorCode, deps.firstAccountProbeDelayMs);
        await deps.invalidateCustomer(tx, mark.customerId);
      }
    }),
  );
  logChanges(deps.log, changes, 'send attempt', deps.tally);
  if (pairLimited(items).length > 0) deps.onPairLearned();
  if (paused.length > 0) deps.onPaused(paused);
  if (slowed.length > 0) {
    deps.onSlowed(slowed);
    for (const s of slowed)
      deps.log.info(s, "the provider refused the number's throughput (130429): the account's send pace is lowered");
  }
  for (const [accountId, mark] of marks) {
    deps.onMarked(accountId);
    deps.log.warn(
      { accountId, errorCode: mark.errorCode, status: mark.status },
      'chat account marked after a provider error',
    );
  }
  return items.map((o) => o.result.transition.nextDueAt);
}

/** Accounts to mark, once each (the transaction takes them in id order: no deadlock between batches). */
function accountMarks(items: Outcome[]): Map<string, AccountMark> {
  const marks = new Map<string, AccountMark>();
  for (const o of items) {
    const v = o.result.verdict;
    if (v?.action === 'account')
      marks.set(o.message.chatAccountId, {
        customerId: o.message.customerId,
        status: v.accountStatus,
        errorCode: v.errorCode,
      });
  }
  return marks;
}

/** Recipients the provider refused as opted out (131050) go on their account's suppression list. */
function optOuts(items: Outcome[]) {
  return items
    .filter((o) => o.result.verdict?.errorCode === SEND_ERROR_CODES.RECIPIENT_OPTED_OUT)
    .map((o) => ({
      accountId: o.message.chatAccountId,
      customerId: o.message.customerId,
      phone: o.message.recipient,
      source: 'provider_error' as const,
      reason: 'The provider refused a send: the user opted out of marketing messages (131050)',
    }));
}

/** Recipients the provider refused for the pair rate limit (131056): their pair is paced from now on. */
function pairLimited(items: Outcome[]) {
  return items
    .filter((o) => o.result.verdict?.errorCode === 'RECIPIENT_RATE_LIMITED')
    .map((o) => ({ accountId: o.message.chatAccountId, recipient: o.message.recipient }));
}

/**
 * A send over the Marketing Messages API whose transition found the row moved on (its receipt was
 * applied first) still records its route (decision 0038); rare, so a statement only then.
 */
async function keepMarketingRoutes(tx: Queryable, items: Outcome[], changes: AppliedChange[]) {
  const applied = new Set(changes.map((c) => c.messageId));
  const ids = items
    .filter((o) => o.result.transition.route === 'marketing_messages' && !applied.has(o.message.id))
    .map((o) => o.message.id);
  if (ids.length > 0) await recordMarketingRoutes(tx, ids);
}
