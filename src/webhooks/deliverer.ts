// The deliverer worker: claims due deliveries (FOR UPDATE SKIP LOCKED + lease), POSTs each signed
// event to its endpoint through the guarded outbound client, and records every attempt. A slow or
// dead endpoint holds at most a few requests of this process (the rest of its deliveries wait),
// so it never holds up the others.
import crypto from 'node:crypto';
import os from 'node:os';

import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { DELIVERIES_READY } from '../events/outbox.js';
import type { OutboundClient, PostResult } from '../outbound/outbound-client.js';
import { backoffDelayMs } from '../shared/backoff.js';
import type { Sealer } from '../shared/crypto.js';
import { createGroupCommit } from '../shared/group-commit.js';
import { createWorkerLoop } from '../shared/worker-loop.js';
import { signatureHeader } from './signature.js';

/** Delays after attempt 1…7 (≈30 s, 2 min, 8 min, 32 min, ≈2 h, then 4 h): 8 attempts in ≈11 h. */
export const WEBHOOK_SCHEDULE_MS = [30_000, 120_000, 480_000, 1_920_000, 7_200_000, 14_400_000, 14_400_000] as const;
export const WEBHOOK_MAX_ATTEMPTS = 8;
export const WEBHOOK_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BODY = 1024;

type Claimed = {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: string;
  attemptCount: number;
};
type Endpoint = { id: string; url: string; isActive: boolean; secrets: string[] };
type Result = { delivery: Claimed; at: Date; post: PostResult | null; skipped?: 'inactive' };

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
  const { db, log, sealer, client, options } = deps;
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const busy = new Map<string, number>(); // endpoint id → requests in flight in this process
  let inFlight = 0;

  function succeeded(r: Result) {
    return r.post !== null && r.post.error === null && r.post.statusCode! >= 200 && r.post.statusCode! < 300;
  }
  function reason(p: PostResult): string {
    if (p.error) return p.error;
    return p.statusCode! >= 300 && p.statusCode! < 400
      ? `HTTP ${p.statusCode} (redirects are not followed)`
      : `HTTP ${p.statusCode}`;
  }

  const results = createGroupCommit<Result, void>(
    async (items) => {
      const now = new Date();
      const rows = items.map((r) => {
        if (r.skipped === 'inactive')
          return { id: r.delivery.id, status: 'failed', attempts: r.delivery.attemptCount, next: null, code: null };
        const attempts = r.delivery.attemptCount + 1;
        const ok = succeeded(r);
        const final = ok || attempts >= WEBHOOK_MAX_ATTEMPTS;
        const next = final
          ? null
          : new Date(now.getTime() + backoffDelayMs(attempts, WEBHOOK_SCHEDULE_MS, { scale: options.retryTimeScale }));
        return {
          id: r.delivery.id,
          status: ok ? 'succeeded' : final ? 'failed' : 'pending',
          attempts,
          next,
          code: r.post?.statusCode ?? null,
        };
      });
      const attempted = items.filter((r) => r.post !== null);
      await retryTransient(() =>
        db.transaction(async (tx) => {
          await tx.query(
            `UPDATE webhook_deliveries d SET status = t.status, attempt_count = t.attempts, next_attempt_at = t.next,
                  last_status_code = COALESCE(t.code, d.last_status_code), locked_by = NULL, locked_until = NULL,
                  completed_at = CASE WHEN t.status = 'pending' THEN NULL ELSE now() END
             FROM unnest($2::uuid[], $3::text[], $4::int[], $5::timestamptz[], $6::int[]) AS t(id, status, attempts, next, code)
            WHERE d.id = t.id AND d.locked_by = $1`,
            [
              workerId,
              rows.map((r) => r.id),
              rows.map((r) => r.status),
              rows.map((r) => r.attempts),
              rows.map((r) => r.next?.toISOString() ?? null),
              rows.map((r) => r.code),
            ],
          );
          if (attempted.length === 0) return;
          await tx.query(
            `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, response_body, error)
           SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[])`,
            [
              attempted.map((r) => r.delivery.id),
              attempted.map((r) => r.at.toISOString()),
              attempted.map((r) => r.post!.statusCode),
              attempted.map((r) => r.post!.durationMs),
              attempted.map((r) => r.post!.body.slice(0, MAX_RESPONSE_BODY)),
              attempted.map((r) => r.post!.error),
            ],
          );
          // One row per endpoint (an UPDATE … FROM applies only one source row per target), in id order.
          const stats = new Map<string, { success: Date | null; failure: Date | null; reason: string | null }>();
          for (const r of attempted) {
            const s = stats.get(r.delivery.endpointId) ?? { success: null, failure: null, reason: null };
            if (succeeded(r)) s.success = !s.success || r.at > s.success ? r.at : s.success;
            else if (!s.failure || r.at >= s.failure) {
              s.failure = r.at;
              s.reason = reason(r.post!);
            }
            stats.set(r.delivery.endpointId, s);
          }
          const ids = [...stats.keys()].sort();
          await tx.query(
            `UPDATE webhook_endpoints e SET
              last_success_at = CASE WHEN t.ok_at IS NULL THEN e.last_success_at ELSE greatest(e.last_success_at, t.ok_at) END,
              last_failure_at = CASE WHEN t.fail_at IS NULL THEN e.last_failure_at ELSE greatest(e.last_failure_at, t.fail_at) END,
              last_failure_reason = CASE WHEN t.fail_at IS NULL OR t.fail_at < e.last_failure_at THEN e.last_failure_reason ELSE t.reason END
             FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::text[]) AS t(id, ok_at, fail_at, reason)
            WHERE e.id = t.id`,
            [
              ids,
              ids.map((id) => stats.get(id)!.success?.toISOString() ?? null),
              ids.map((id) => stats.get(id)!.failure?.toISOString() ?? null),
              ids.map((id) => stats.get(id)!.reason),
            ],
          );
        }),
      );
      for (const r of rows) if (r.next) loop.wake(r.next);
      return items.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: 1 },
  );

  async function loadEndpoints(ids: string[]): Promise<Map<string, Endpoint>> {
    const rows = await db.query<Record<string, unknown>>(
      `SELECT id, url, is_active, secret_enc, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_enc END AS previous_enc
         FROM webhook_endpoints WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(
      rows.map((r) => [
        r.id as string,
        {
          id: r.id as string,
          url: r.url as string,
          isActive: r.is_active as boolean,
          secrets: [r.secret_enc, r.previous_enc]
            .filter((s): s is string => typeof s === 'string')
            .map((s) => sealer.open(s)),
        },
      ]),
    );
  }

  // Claimed deliveries wait here per endpoint until one of its few request slots frees up.
  const queues = new Map<string, { endpoint: Endpoint; waiting: Claimed[] }>();
  const backlog = (id: string) => (busy.get(id) ?? 0) + (queues.get(id)?.waiting.length ?? 0);

  function pump(endpointId: string) {
    const q = queues.get(endpointId);
    if (!q) return;
    while (q.waiting.length > 0 && (busy.get(endpointId) ?? 0) < options.perEndpointConcurrency)
      deliver(q.waiting.shift()!, q.endpoint);
    if (q.waiting.length === 0 && (busy.get(endpointId) ?? 0) === 0) queues.delete(endpointId);
  }

  function deliver(d: Claimed, endpoint: Endpoint) {
    inFlight++;
    busy.set(endpoint.id, (busy.get(endpoint.id) ?? 0) + 1);
    const at = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'ChatGate-Webhooks/1.0',
      'x-svc-event': d.eventType,
      'x-svc-event-id': d.eventId,
      'x-svc-signature': signatureHeader(d.payload, endpoint.secrets),
    };
    void client
      .post(endpoint.url, d.payload, headers, WEBHOOK_TIMEOUT_MS)
      .then((post) => {
        deps.observe({ endpointId: endpoint.id, payload: d.payload, post });
        return results.submit({ delivery: d, at, post });
      })
      .catch((err: unknown) =>
        log.error(
          { err, deliveryId: d.id },
          'recording a webhook attempt failed; the lease will expire and it be retried',
        ),
      )
      .finally(() => {
        inFlight--;
        busy.set(endpoint.id, (busy.get(endpoint.id) ?? 1) - 1);
        pump(endpoint.id);
        loop.wake();
      });
  }

  async function pass() {
    const room = options.maxInFlight - inFlight - [...queues.values()].reduce((n, q) => n + q.waiting.length, 0);
    if (room <= 0) return { didWork: false };
    // Endpoints with a full local backlog are not claimed for: a slow one cannot fill the batch.
    const full = [...queues.keys()].filter((id) => backlog(id) >= options.perEndpointConcurrency * 4);
    const rows = await db.query<Record<string, unknown>>(
      `UPDATE webhook_deliveries d SET locked_by = $1, locked_until = now() + make_interval(secs => $2)
         FROM (SELECT id FROM webhook_deliveries
                WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
                  AND endpoint_id <> ALL ($4::uuid[])
                ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED) x
        WHERE d.id = x.id
        RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.attempt_count`,
      [workerId, options.leaseSeconds, Math.min(options.batchSize, room), full],
    );
    if (rows.length === 0) return { didWork: false };
    const claimed: Claimed[] = rows.map((r) => ({
      id: r.id as string,
      endpointId: r.endpoint_id as string,
      eventId: r.event_id as string,
      eventType: r.event_type as string,
      payload: r.payload as string,
      attemptCount: Number(r.attempt_count),
    }));
    const endpoints = await loadEndpoints([...new Set(claimed.map((d) => d.endpointId))]);
    const dropped: Result[] = [];
    const overflow: string[] = [];
    for (const d of claimed) {
      const endpoint = endpoints.get(d.endpointId);
      // Deactivated since the event: nothing is sent (the test event goes to inactive endpoints too).
      if (!endpoint || (!endpoint.isActive && d.eventType !== 'webhook.test')) {
        dropped.push({ delivery: d, at: new Date(), post: null, skipped: 'inactive' });
        continue;
      }
      if (backlog(endpoint.id) >= options.perEndpointConcurrency * 4) {
        overflow.push(d.id);
        continue;
      }
      const q = queues.get(endpoint.id) ?? { endpoint, waiting: [] };
      q.endpoint = endpoint; // the row just read: a URL change or a rotation applies from now on
      q.waiting.push(d);
      queues.set(endpoint.id, q);
    }
    for (const id of queues.keys()) pump(id);
    if (overflow.length > 0)
      await db.query(
        'UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL WHERE id = ANY($1::uuid[]) AND locked_by = $2',
        [overflow, workerId],
      );
    if (dropped.length > 0) await Promise.all(dropped.map((s) => results.submit(s)));
    return { didWork: overflow.length + dropped.length < claimed.length };
  }

  const loop = createWorkerLoop({
    name: 'deliverer',
    pollMs: options.pollMs,
    log,
    pass,
    wakeOn: { db, channel: DELIVERIES_READY },
  });

  return {
    workerId,
    start: () => loop.start(),
    async stop() {
      await loop.stop();
      for (const q of queues.values()) q.waiting.length = 0; // not sent: their leases are released below
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
      await results.drain();
      await db.query('UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL WHERE locked_by = $1', [
        workerId,
      ]);
    },
  };
}
