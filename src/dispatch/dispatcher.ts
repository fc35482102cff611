// The dispatcher worker: claims due messages in batches and moves each one step forward.
// Sandbox messages are simulated; live ones are checked against their account, paced into
// per-account slots shared by every worker process, sent through the provider client, and
// their outcomes are written back in group-committed batches.
import type { Logger } from 'pino';

import { findCancelled } from '../broadcasts/cancel-messages.js';
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyTransitions, type ChangeTally, logChanges } from '../lifecycle/apply-transitions.js';
import { claimDue, type Claimed, nextDueTime, releaseLeases } from '../lifecycle/claim.js';
import { MESSAGES_READY } from '../lifecycle/create-messages.js';
import { failUnsent, lockQuotaForRefund } from '../lifecycle/fail-unsent.js';
import { CANCELLED_ERROR, type Transition } from '../lifecycle/transitions.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { createLeasedWorker } from '../shared/worker-loop.js';
import { createThroughputRefresh } from './account-maintenance.js';
import { changeEvents, type DispatchHooks } from './dispatch-events.js';
import { createHeldSends, createLiveDispatch, earliest, type HeldSends } from './live-dispatch.js';
import { type Outcome, writeOutcomes } from './outcomes.js';
import type { MediaPreparer } from './prepare-media.js';
import { failRefusedRecipients, type RecipientChecks } from './recipient-checks.js';
import { createPairPacing, type PairPacing } from './recipient-pacing.js';
import { resolveReplyTargets } from './reply-targets.js';
import { simulateSandboxStep } from './sandbox-simulator.js';

export type DispatcherOptions = {
  batchSize: number;
  leaseSeconds: number;
  pollMs: number;
  sandboxStepMs: number;
  retryTimeScale: number;
  /** How long a send that may have reached the provider waits for its receipt (SEND_CONFIRM_WAIT_MS; decision 0061). */
  confirmWaitMs: number;
  /** Live sends in flight at once in this process. */
  maxInFlight: number;
  /** How far ahead an account's send slots may be booked: inside the lease, with room for the send. */
  pacingHorizonMs: number;
  /** How long after its booking a send may still get its provider connection (decision 0061). */
  sendStartRoomMs: number;
  /** Media steps (fetch, upload) at once in this process. */
  maxMediaSteps: number;
  /** When an account marked after a rejected token is first probed (scaled; see accounts/account-prober.ts). */
  firstAccountProbeDelayMs: number;
  /** The spacing a recipient's sends get after the provider's pair rate limit (131056), before doubling (PAIR_RATE_SPACING_MS). */
  pairSpacingMs: number;
  /** How long an account's sends pause after the provider's maintenance refusal, 131057 (PROVIDER_MAINTENANCE_PAUSE_MS). */
  maintenancePauseMs: number;
};

export function createDispatcher(deps: {
  db: Db;
  log: Logger;
  options: DispatcherOptions;
  provider: ProviderClient;
  media: MediaPreparer;
  sealer: Sealer;
  invalidateCustomer: (tx: Queryable, customerId: string) => Promise<void>;
  /** Template categories for the suppression check (decision 0014). */
  categories: RecipientChecks['categories'];
  /** MARKETING_BLOCKED_MARKETS (see shared/markets.ts). */
  blockedMarkets: readonly string[];
  /** Where the dispatcher tells what it did (dispatch-events.ts); the observers subscribe in the composition root. */
  hooks: DispatchHooks;
}) {
  const { db, log, options } = deps;
  // Built in order, each from what it needs: the sends held between claim and outcome; the worker,
  // whose outcome writer blocks accounts and whose stop drops booked sends; the live path, which
  // books sends and records their outcomes through the worker. The pass below uses the last two
  // (the worker calls it only once started).
  const throughput = createThroughputRefresh({ db, log, sealer: deps.sealer, provider: deps.provider });
  const held = createHeldSends(throughput.stop);
  const pairPacing = createPairPacing(db);
  const { hooks } = deps;
  const tally = changeEvents(hooks);
  const loop = { db, log, pollMs: options.pollMs, channel: MESSAGES_READY };
  const worker = createLeasedWorker<Outcome>('dispatcher', loop, {
    pass,
    // Outcomes of sends are written together: one transaction for many messages.
    write: (workerId, items) =>
      writeOutcomes(outcomeDeps(deps, { held, pairPacing, throughput, tally }), workerId, items),
    writeConcurrency: db.kind === 'pglite' ? 1 : 2,
    dropUnstarted: held.cancelTimers,
    releaseLeases: (workerId) => releaseLeases(db, workerId),
  });
  const { provider, media, sealer } = deps;
  const { retryTimeScale, pacingHorizonMs, maxMediaSteps } = options;
  const live = createLiveDispatch({
    db,
    log,
    provider,
    media,
    sealer,
    retryTimeScale,
    confirmWaitMs: options.confirmWaitMs,
    leaseSeconds: options.leaseSeconds,
    pacingHorizonMs,
    sendStartRoomMs: options.sendStartRoomMs,
    maxMediaSteps,
    worker,
    held,
    hooks,
    categories: deps.categories,
    pairPacing,
    maintenancePauseMs: options.maintenancePauseMs,
  });

  /** Claim, then move each message one step: sandbox ones simulated, live ones refused, booked or sent. */
  async function pass() {
    const room = options.maxInFlight - worker.inFlight();
    if (room <= 0) return { didWork: false };
    const claimed = await claimDue(db, worker.workerId, Math.min(options.batchSize, room), options.leaseSeconds);
    // Idle: sleep no later than the next due time (a scheduled send leaves on time).
    if (claimed.length === 0) return { didWork: false, nextDueAt: await nextDueTime(db) };
    for (const message of claimed)
      if (message.previousHolder !== null && message.previousHolder !== worker.workerId)
        hooks.emit('leaseTakeover', { message, workerId: worker.workerId });
    const now = new Date();
    const sandbox = claimed.filter((m) => m.sandbox);
    const targets = await liveReady({ ...deps, tally }, worker.workerId, claimed);
    const liveOnes = targets.ready;
    const simulatedDue = await simulate({ db, log, tally }, worker.workerId, sandbox, now, options.sandboxStepMs);
    const liveDue = liveOnes.length > 0 ? await live.dispatch(liveOnes) : null;
    const nextDueAt = [liveDue, simulatedDue, targets.nextDueAt].reduce<Date | null>(
      (min, d) => (d && (!min || d < min) ? d : min),
      null,
    );
    log.debug({ worker: worker.workerId, sandbox: sandbox.length, live: liveOnes.length }, 'dispatched batch');
    return { didWork: true, nextDueAt };
  }

  return {
    workerId: worker.workerId,
    start: () => worker.start(),
    stop: () => worker.stop(),
    stalledMs: worker.stalledMs,
  };
}

/** What the outcome writer needs, and what it tells the live path (blocked accounts, learned pairs, pauses). */
function outcomeDeps(
  deps: Parameters<typeof createDispatcher>[0],
  parts: {
    held: HeldSends;
    pairPacing: PairPacing;
    throughput: ReturnType<typeof createThroughputRefresh>;
    tally: ChangeTally;
  },
): Parameters<typeof writeOutcomes>[0] {
  const { options } = deps;
  return {
    db: deps.db,
    log: deps.log,
    invalidateCustomer: deps.invalidateCustomer,
    onMarked: parts.held.block,
    firstAccountProbeDelayMs: options.firstAccountProbeDelayMs,
    pairSpacingMs: options.pairSpacingMs,
    onPairLearned: parts.pairPacing.learned,
    maintenancePauseMs: options.maintenancePauseMs,
    onPaused: (ids) => ids.forEach((id) => parts.throughput.after(id, options.maintenancePauseMs)),
    onSlowed: (slowed) => deps.hooks.emit('paceLowered', { count: slowed.length }),
    tally: parts.tally,
  };
}

/**
 * The claimed live messages that may go now: cancelled ones and those their recipient rules out
 * fail here; replies and reactions whose target has no provider id yet wait (reply-targets.ts).
 */
async function liveReady(
  deps: Omit<RecipientChecks, 'onPortfolioLimit'> & { hooks: DispatchHooks },
  workerId: string,
  claimed: Claimed[],
) {
  const { db, log, tally, hooks } = deps;
  const refusedOrNot = await failRefusedRecipients(
    {
      db,
      log,
      tally,
      categories: deps.categories,
      blockedMarkets: deps.blockedMarkets,
      onPortfolioLimit: (limit) => hooks.emit('portfolioLimit', limit),
    },
    workerId,
    await failCancelled(
      db,
      workerId,
      claimed.filter((m) => !m.sandbox),
    ),
  );
  return resolveReplyTargets({ db, log, tally }, workerId, refusedOrNot);
}

/** Sandbox messages take their simulated step; returns when the next one is due, if any. */
async function simulate(
  deps: { db: Db; log: Logger; tally: ChangeTally },
  workerId: string,
  sandbox: Claimed[],
  now: Date,
  stepMs: number,
) {
  const { db } = deps;
  const simulated = sandbox.map((m) => simulateSandboxStep(m, now, stepMs)).filter((t): t is Transition => t !== null);
  if (simulated.length > 0)
    logChanges(
      deps.log,
      await retryTransient(() => db.transaction((tx) => applyTransitions(tx, workerId, simulated))),
      'sandbox',
      deps.tally,
    );
  return earliest(simulated);
}

/** Claimed messages of cancelled broadcasts are failed (never sent); returns the others. */
async function failCancelled(db: Db, workerId: string, live: Claimed[]): Promise<Claimed[]> {
  const ids = [...new Set(live.flatMap((m) => (m.broadcastId !== null ? [m.broadcastId] : [])))];
  const cancelled = await findCancelled(db, ids);
  if (cancelled.size === 0) return live;
  const failing = live.filter((m) => m.broadcastId !== null && cancelled.has(m.broadcastId));
  await retryTransient(() =>
    db.transaction(async (tx) => {
      // Quota rows first, as inserts lock them (no deadlock).
      await lockQuotaForRefund(
        tx,
        [...cancelled.values()].map((b) => b.customerId),
      );
      await failUnsent(tx, workerId, failing, CANCELLED_ERROR);
    }),
  );
  return live.filter((m) => m.broadcastId === null || !cancelled.has(m.broadcastId));
}
