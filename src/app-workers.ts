// The worker role of the composition root: the dispatcher, the parked-receipt sweep, the account
// prober, the webhook deliverer, the usage rollup and the purger, over the services of app-services.ts.
import type { Logger } from 'pino';

import { createAccountProber } from './accounts/account-prober.js';
import type { Services } from './app-services.js';
import type { Config } from './config.js';
import type { Db } from './db/db.js';
import type { DispatchEvents, DispatchHooks } from './dispatch/dispatch-events.js';
import { createDispatcher } from './dispatch/dispatcher.js';
import { createMediaPreparer } from './dispatch/prepare-media.js';
import { createWorkerActivity } from './dispatch/worker-activity.js';
import { createInboundMediaFetcher } from './inbound/inbound-media-fetcher.js';
import { webhookObserver } from './metrics/webhook-observer.js';
import { createPurger } from './purge/purger.js';
import { createParkedReceiptSweep } from './receipts/parked-sweep.js';
import { createHooks } from './shared/hooks.js';
import { createUsageRollup } from './usage/usage-rollup-loop.js';
import { createDeliverer } from './webhooks/deliverer.js';

/** The worker role's loops (each with start and stop), not started yet; the dispatcher also apart (/readyz watches it). */
export function createWorkers(config: Config, deps: { db: Db; log: Logger }, s: Services) {
  const dispatcher = createSendDispatcher(config, deps, s);
  return { dispatcher, all: [dispatcher, ...createBackgroundWorkers(config, deps, s)] };
}

function createSendDispatcher(config: Config, deps: { db: Db; log: Logger }, s: Services) {
  const { db, log } = deps;
  const { provider, mediaStore, outbound, sealer, directory, templateCategories, metrics } = s;
  const hooks = createHooks<DispatchEvents>((err, event) =>
    log.error({ err, event }, 'an observer of the dispatcher failed'),
  );
  const dispatcher = createDispatcher({
    db,
    log,
    provider,
    media: createMediaPreparer({
      db,
      store: mediaStore,
      provider,
      outbound,
      retryTimeScale: config.retryTimeScale,
      fetchTimeoutMs: config.mediaFetchTimeoutMs,
    }),
    sealer,
    invalidateCustomer: directory.invalidate,
    categories: templateCategories,
    blockedMarkets: config.marketingBlockedMarkets,
    hooks,
    options: {
      batchSize: config.workerBatchSize,
      leaseSeconds: config.workerLeaseSeconds,
      pollMs: config.workerPollMs,
      sandboxStepMs: config.sandboxStepMs,
      retryTimeScale: config.retryTimeScale,
      // Scaled like every retry delay (RETRY_TIME_SCALE), so tests wait milliseconds.
      confirmWaitMs: Math.max(1, Math.round(config.sendConfirmWaitMs * config.retryTimeScale)),
      maxInFlight: config.workerMaxInFlight,
      maxMediaSteps: config.maxMediaSteps,
      pacingHorizonMs: config.dispatchPacingHorizonMs,
      sendStartRoomMs: config.dispatchSendStartRoomMs,
      firstAccountProbeDelayMs: config.accountProbeFirstDelayScaledMs,
      pairSpacingMs: config.pairRateSpacingMs,
      maintenancePauseMs: config.maintenancePauseMs,
    },
  });
  // The one place the dispatcher's observers subscribe: its metrics and its activity line.
  observeDispatch(hooks, metrics);
  const activity = createWorkerActivity({
    db,
    log,
    workerId: () => dispatcher.workerId,
    everyMs: config.workerActivityLogMs,
  });
  activity.subscribe(hooks);
  return { ...dispatcher, ...activity.around(dispatcher) };
}

/** The dispatcher's metrics, counted from its events. */
function observeDispatch(hooks: DispatchHooks, metrics: Services['metrics']): void {
  hooks.on('lateSends', ({ outcome, count }) => metrics.lateSends.inc({ outcome }, count));
  hooks.on('pairHeld', ({ count }) => metrics.pairHeldSends.inc(count));
  hooks.on('paceLowered', ({ count }) => metrics.paceLowered.inc(count));
  hooks.on('portfolioLimit', ({ refused, crossings }) => {
    if (refused > 0) metrics.portfolioLimit.inc({ outcome: 'refused', threshold: '' }, refused);
    for (const level of crossings) metrics.portfolioLimit.inc({ outcome: 'alert', threshold: String(level) });
  });
}

/** The loops beside the dispatcher. */
function createBackgroundWorkers(config: Config, deps: { db: Db; log: Logger }, s: Services) {
  const { db, log } = deps;
  const { provider, outbound, sealer, directory, metrics, mediaStore } = s;
  return [
    createParkedReceiptSweep({ db, log, intervalMs: config.parkedSweepMs }),
    createUsageRollup({ db, log }),
    createInboundMediaFetcher({
      db,
      log,
      sealer,
      store: mediaStore,
      provider,
      metrics,
      options: {
        pollMs: config.workerPollMs,
        maxBytes: config.inboundMediaMaxBytes,
        types: config.inboundMediaTypes,
        maxAttempts: config.inboundMediaMaxAttempts,
        retryTimeScale: config.retryTimeScale,
        leaseSeconds: config.inboundMediaLeaseSeconds,
      },
    }),
    createAccountProber({
      db,
      log,
      sealer,
      provider,
      invalidateCustomer: directory.invalidate,
      options: {
        pollMs: config.workerPollMs,
        firstDelayMs: config.accountProbeFirstDelaySeconds * 1000,
        maxDelayMs: config.accountProbeMaxDelaySeconds * 1000,
        retryTimeScale: config.retryTimeScale,
        leaseSeconds: config.accountProbeLeaseSeconds,
      },
    }),
    createDeliverer({
      db,
      log,
      sealer,
      client: outbound,
      observe: webhookObserver(metrics),
      options: {
        batchSize: config.workerBatchSize,
        leaseSeconds: config.webhookLeaseSeconds,
        pollMs: config.workerPollMs,
        retryTimeScale: config.retryTimeScale,
        perEndpointConcurrency: config.webhookPerEndpointConcurrency,
        maxInFlight: config.webhookMaxInFlight,
      },
    }),
    createPurger({ db, log, intervalSeconds: config.purgeIntervalSeconds }),
  ];
}
