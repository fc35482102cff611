// The deliverer worker: claims due deliveries (FOR UPDATE SKIP LOCKED + lease), POSTs each signed
// event to its endpoint through the guarded outbound client, and records every attempt. A slow or
// dead endpoint holds at most a few requests of this process (the rest of its deliveries wait),
// so it never holds up the others.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { type HandedDelivery, type LocalDeliverer, setLocalDeliverer } from '../events/local-delivery.js';
import { DELIVERIES_READY } from '../events/outbox.js';
import {
  claimDueDeliveries,
  type ClaimedDelivery,
  type DeliveryUpdate,
  type EndpointHealth,
  recordOutcomes,
  releaseDeliveries,
  releaseDeliveryLeases,
  startDeliveryAttempts,
} from '../lifecycle/record-deliveries.js';
import type { OutboundClient, PostResult } from '../outbound/outbound-client.js';
import { backoffDelayMs } from '../shared/backoff.js';
import type { Sealer } from '../shared/crypto.js';
import { createGroupCommit } from '../shared/group-commit.js';
import { createLeasedWorker, type PassResult } from '../shared/worker-loop.js';
import { type Endpoint, loadEndpoints } from './delivery-store.js';
import { createEndpointQueues, type EndpointQueues } from './endpoint-queues.js';
import { requestHeaders, signatureHeader } from './signature.js';

/** Delays after attempt 1…7 (≈30 s, 2 min, 8 min, 32 min, ≈2 h, then 4 h): 8 attempts in ≈11 h. */
export const WEBHOOK_SCHEDULE_MS = [30_000, 120_000, 480_000, 1_920_000, 7_200_000, 14_400_000, 14_400_000] as const;
export const WEBHOOK_MAX_ATTEMPTS = 8;
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * An attempt's outcome, or a delivery ended without one: `inactive` (endpoint gone or
 * deactivated), `interrupted` (claimed again with every attempt counted: the last POST never
 * finished, its worker stopped during it).
 */
type Result = { delivery: ClaimedDelivery; at: Date; post: PostResult | null; skipped?: 'inactive' | 'interrupted' };

/** The endpoint's lastFailureReason when a delivery's last attempt never finished. */
export const INTERRUPTED_REASON = 'interrupted: the worker stopped during the request, and no attempt was left';

/** Told of every attempt made (metrics); `payload` is the signed envelope, as sent. */
export type DeliveryObserver = (attempt: { endpointId: string; payload: string; post: PostResult }) => void;

export type DelivererOptions = {
  batchSize: number;
  leaseSeconds: number;
  pollMs: number;
  retryTimeScale: number;
  perEndpointConcurrency: number;
  maxInFlight: number;
};

export function createDeliverer(deps: {
  db: Db;
  log: Logger;
  sealer: Sealer;
  client: OutboundClient;
  options: DelivererOptions;
  observe: DeliveryObserver;
}) {
  const { db, log, sealer, options } = deps;
  const queues = createEndpointQueues({
    concurrency: options.perEndpointConcurrency,
    begin: () => worker.begin(),
    send: (d, endpoint) =>
      // Counted by its claim (it had a free slot), or counted now with the others starting.
      (d.counted ? Promise.resolve(true) : starts.submit(d.id))
        .then(async (counted) => {
          // The lease ran out before the POST started: its new holder sends it.
          if (!counted) return log.warn({ deliveryId: d.id }, 'the lease of a webhook delivery ran out; not sent here');
          const result = await post(deps.client, d, endpoint);
          if (result.post) deps.observe({ endpointId: endpoint.id, payload: d.payload, post: result.post });
          return worker.record(result);
        })
        .catch((err: unknown) =>
          log.error(
            { err, deliveryId: d.id },
            'recording a webhook attempt failed; the lease will expire and it be retried',
          ),
        ),
  });
  // Each POST's attempt is counted as it starts, before the request (the POSTs starting together
  // share one statement), so one that kills the worker still uses up the delivery's attempts.
  const starts = createGroupCommit<string, boolean>(
    async (ids) => {
      const counted = await retryTransient(() => startDeliveryAttempts(db, worker.workerId, ids));
      return ids.map((id) => counted.has(id));
    },
    { maxBatch: 500, maxInFlight: 1 },
  );
  const loop = { db, log, pollMs: options.pollMs, channel: DELIVERIES_READY };
  const worker = createLeasedWorker<Result>('deliverer', loop, {
    pass,
    write: (workerId, items) => writeResults(db, log, workerId, items, options.retryTimeScale),
    writeConcurrency: 1,
    dropUnstarted: () => queues.clear(), // not sent: their leases are released
    releaseLeases: (workerId) => releaseDeliveryLeases(db, workerId),
  });

  /** Claim, then queue each delivery behind its endpoint. */
  async function pass(): Promise<PassResult> {
    const free = requestRoom(options, worker, queues);
    if (free <= 0) return { didWork: false };
    const limit = Math.min(options.batchSize, free);
    const claimed = await claimDueDeliveries(db, worker.workerId, {
      ...queues.claimLimits(),
      limit,
      leaseSeconds: options.leaseSeconds,
      maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    });
    if (claimed.length === 0) return { didWork: false };
    return enqueue(claimed);
  }

  const enqueue = (claimed: ClaimedDelivery[]): Promise<PassResult> =>
    queueClaimed({ db, sealer, workerId: worker.workerId, queues, record: (r) => worker.record(r) }, claimed);

  const local = createHandoff({ log, queues, enqueue, worker, options });

  return {
    workerId: worker.workerId,
    async start() {
      await worker.start();
      local.taking = true;
      setLocalDeliverer(db, local);
    },
    async stop() {
      local.taking = false;
      setLocalDeliverer(db, null);
      await local.drain();
      await worker.stop();
    },
  };
}

/** Queues each claimed delivery behind its endpoint (or drops it: endpoint gone or inactive). */
async function queueClaimed(
  c: { db: Db; sealer: Sealer; workerId: string; queues: EndpointQueues; record: (r: Result) => Promise<void> },
  claimed: ClaimedDelivery[],
): Promise<PassResult> {
  const { db, sealer, queues } = c;
  // Those the claim counted first: they had a free slot each, and take it at the pump below.
  claimed.sort((a, b) => Number(b.counted) - Number(a.counted));
  const endpoints = await loadEndpoints(db, sealer, [...new Set(claimed.map((d) => d.endpointId))]).catch(
    async (err: unknown) => {
      // Nothing was POSTed: the claim's counted attempts go back with the leases.
      await releaseDeliveries(db, c.workerId, claimed).catch(() => undefined);
      throw err;
    },
  );
  const dropped: Result[] = [];
  const overflow: ClaimedDelivery[] = [];
  for (const d of claimed) {
    const endpoint = endpoints.get(d.endpointId);
    // Deactivated since the event: nothing is sent (the test event goes to inactive endpoints too).
    if (!endpoint || (!endpoint.isActive && d.eventType !== 'webhook.test'))
      dropped.push({ delivery: d, at: new Date(), post: null, skipped: 'inactive' });
    // Every attempt counted, the last never finished: not sent again.
    else if (d.attemptCount >= WEBHOOK_MAX_ATTEMPTS)
      dropped.push({ delivery: d, at: new Date(), post: null, skipped: 'interrupted' });
    else if (queues.isFull(endpoint.id)) overflow.push(d);
    else queues.push(d, endpoint);
  }
  queues.pumpAll();
  if (overflow.length > 0) await releaseDeliveries(db, c.workerId, overflow);
  if (dropped.length > 0) await Promise.all(dropped.map((s) => c.record(s)));
  return { didWork: overflow.length + dropped.length < claimed.length };
}

/**
 * This deliverer as the outbox's local deliverer (decision 0079): deliveries written leased to it
 * by a transaction of this process, queued together when several commit at once (one read of their
 * endpoints per batch).
 */
function createHandoff(deps: {
  log: Logger;
  queues: EndpointQueues;
  enqueue: (claimed: ClaimedDelivery[]) => Promise<unknown>;
  worker: { workerId: string; inFlight(): number };
  options: Pick<DelivererOptions, 'leaseSeconds' | 'maxInFlight'>;
}): LocalDeliverer & { taking: boolean; drain: () => Promise<void> } {
  const { log, queues } = deps;
  const handed = createGroupCommit<ClaimedDelivery, void>(
    async (ds) => {
      // Some only when this worker has stopped meanwhile: their leases run out, then others claim them.
      if (handoff.taking) await deps.enqueue(ds);
      return ds.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: 1 },
  );
  const handoff = {
    taking: false,
    holder: deps.worker.workerId,
    leaseSeconds: deps.options.leaseSeconds,
    freeSlots() {
      // None while the worker has no room for more requests: the claim waits for room the same way.
      return requestRoom(deps.options, deps.worker, queues) > 0
        ? queues.freeSlots()
        : { endpointIds: [], slots: [], otherwise: 0 };
    },
    take(ds: HandedDelivery[]) {
      for (const d of ds)
        handed
          .submit({ ...d, attemptCount: 0, counted: true })
          .catch((err: unknown) =>
            log.error(
              { err, deliveryId: d.id },
              'a webhook delivery handed over at its insert was not queued; its lease will expire and it be claimed',
            ),
          );
    },
    drain: () => handed.drain(),
  };
  return handoff;
}

/** Requests this worker may still start: its in-flight bound less what is in flight or waiting. */
function requestRoom(o: { maxInFlight: number }, w: { inFlight(): number }, q: { waiting(): number }): number {
  return o.maxInFlight - w.inFlight() - q.waiting();
}

/** One signed POST of a delivery's stored body. */
async function post(client: OutboundClient, d: ClaimedDelivery, endpoint: Endpoint): Promise<Result> {
  const at = new Date();
  // Signed at the attempt's own time (stored as attemptedAt): the portal shows `t` from it.
  const headers = requestHeaders(d, signatureHeader(d.payload, endpoint.secrets, Math.floor(at.getTime() / 1000)));
  return { delivery: d, at, post: await client.post(endpoint.url, d.payload, headers, WEBHOOK_TIMEOUT_MS) };
}

/** Records a batch of outcomes in one transaction; returns when each delivery is due again. */
async function writeResults(db: Db, log: Logger, workerId: string, items: Result[], retryTimeScale: number) {
  const now = new Date();
  const updates = items.map((r) => decide(r, now, retryTimeScale));
  const attempted = items.flatMap((r) =>
    r.post !== null ? [{ deliveryId: r.delivery.id, at: r.at, post: r.post }] : [],
  );
  const health = endpointHealth(items);
  await retryTransient(() => recordOutcomes(db, workerId, updates, attempted, health));
  logFailedAttempts(log, items, updates);
  return updates.map((u) => u.next);
}

/** One warn line per failed attempt, after it is recorded: the ids, why, and what happens next. */
function logFailedAttempts(log: Logger, items: Result[], updates: DeliveryUpdate[]): void {
  items.forEach((r, i) => {
    const u = updates[i]!;
    if (r.post === null || u.status === 'succeeded') return;
    const line = {
      deliveryId: r.delivery.id,
      endpointId: r.delivery.endpointId,
      eventId: r.delivery.eventId,
      eventType: r.delivery.eventType,
      attempt: u.attempts,
      httpStatus: r.post.statusCode ?? undefined,
      reason: reason(r.post),
      retryAt: u.next?.toISOString(),
    };
    log.warn(line, u.status === 'failed' ? 'webhook delivery failed for good' : 'webhook delivery failed, will retry');
  });
}

/** A delivery's next state: succeeded, failed for good, or pending until its next attempt. */
function decide(r: Result, now: Date, retryTimeScale: number): DeliveryUpdate {
  if (r.skipped)
    return { id: r.delivery.id, status: 'failed', attempts: r.delivery.attemptCount, next: null, code: null };
  const attempts = r.delivery.attemptCount + 1;
  const ok = succeeded(r.post);
  const final = ok || attempts >= WEBHOOK_MAX_ATTEMPTS;
  const next = final
    ? null
    : new Date(now.getTime() + backoffDelayMs(attempts, WEBHOOK_SCHEDULE_MS, { scale: retryTimeScale }));
  return {
    id: r.delivery.id,
    status: ok ? 'succeeded' : final ? 'failed' : 'pending',
    attempts,
    next,
    code: r.post?.statusCode ?? null,
  };
}

/** Each endpoint's latest success and failure among the attempts. */
function endpointHealth(items: Result[]): Map<string, EndpointHealth> {
  const health = new Map<string, EndpointHealth>();
  for (const r of items) {
    if (r.skipped === 'interrupted') {
      const s = health.get(r.delivery.endpointId) ?? { success: null, failure: null, reason: null };
      if (!s.failure || r.at >= s.failure) Object.assign(s, { failure: r.at, reason: INTERRUPTED_REASON });
      health.set(r.delivery.endpointId, s);
    }
    if (r.post === null) continue;
    const s = health.get(r.delivery.endpointId) ?? { success: null, failure: null, reason: null };
    if (succeeded(r.post)) s.success = !s.success || r.at > s.success ? r.at : s.success;
    else if (!s.failure || r.at >= s.failure) {
      s.failure = r.at;
      s.reason = reason(r.post);
    }
    health.set(r.delivery.endpointId, s);
  }
  return health;
}

function succeeded(p: PostResult | null) {
  return p !== null && p.error === null && p.statusCode! >= 200 && p.statusCode! < 300;
}

function reason(p: PostResult): string {
  if (p.error) return p.error;
  return p.statusCode! >= 300 && p.statusCode! < 400
    ? `HTTP ${p.statusCode} (redirects are not followed)`
    : `HTTP ${p.statusCode}`;
}
