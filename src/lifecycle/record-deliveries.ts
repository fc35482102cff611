// The deliverer's writes of webhook deliveries (as the lifecycle's other modules hold the
// messages'): claiming due deliveries under a lease (FOR UPDATE SKIP LOCKED, so concurrent workers
// never take the same row), counting each attempt as its POST starts, handing leases back, and
// recording each attempt's outcome (webhooks/deliverer.ts runs them).
import type { Db } from '../db/db.js';
import type { PostResult } from '../outbound/outbound-client.js';

export type ClaimedDelivery = {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: string;
  /** Attempts counted before this claim (the claim's own count, if any, is not in it). */
  attemptCount: number;
  /**
   * The claim counted this POST's attempt already (decision 0046): it had a free request slot, so
   * it is sent at once, without the separate start statement of decision 0021.
   */
  counted: boolean;
};

export type DeliveryUpdate = {
  id: string;
  status: 'succeeded' | 'failed' | 'pending';
  attempts: number;
  next: Date | null;
  code: number | null;
};

export type Attempt = { deliveryId: string; at: Date; post: PostResult };

/** An endpoint's latest success and failure among a batch of attempts. */
export type EndpointHealth = { success: Date | null; failure: Date | null; reason: string | null };

/** Room left in this process's queue of one endpoint, and its request slots free now (see endpoint-queues.ts). */
export type EndpointRoom = { endpointId: string; room: number; slots: number };

/** Claim limits: batch size, lease, endpoints left out, room and free slots per endpoint. */
export type ClaimLimits = {
  limit: number;
  leaseSeconds: number;
  excludedEndpointIds: string[];
  rooms: EndpointRoom[];
  defaultRoom: number;
  defaultSlots: number;
  /** A delivery with this many attempts counted is not counted again (it ends `interrupted`). */
  maxAttempts: number;
};

/**
 * The body of delivery `d` as it is sent and signed: the envelope stored once on its event
 * (decision 0046), or, for a delivery written before that, its own copy.
 */
export const DELIVERY_PAYLOAD = 'coalesce(d.payload, (SELECT ev.payload FROM events ev WHERE ev.id = d.event_id))';

/**
 * Claims due deliveries, oldest first, except those of `excludedEndpointIds`, and at most the
 * room each endpoint's queue has left (`rooms`; `defaultRoom` for one with none waiting): a
 * delivery its queue cannot take would only be claimed to be handed back (two row writes for
 * nothing). The rows looked at but left are unlocked when the statement ends.
 *
 * The oldest of each endpoint that fit its free request slots (`EndpointRoom.slots`;
 * `defaultSlots` for one with none here) and have attempts left are counted in the same update
 * (`counted`): they are POSTed as soon as the claim returns, so counting them here is counting at
 * the start (decision 0021) with one row write fewer (decision 0046).
 */
export async function claimDueDeliveries(
  db: Pick<Db, 'query'>,
  workerId: string,
  c: ClaimLimits,
): Promise<ClaimedDelivery[]> {
  const rows = await db.query<Omit<ClaimedDelivery, 'counted'> & { counted: boolean }>(
    `UPDATE webhook_deliveries d SET locked_by = $1, locked_until = now() + make_interval(secs => $2),
            attempt_count = d.attempt_count + CASE WHEN x.counted THEN 1 ELSE 0 END
       FROM (SELECT w.id, w.n <= w.slots AND w.attempt_count < $10 AS counted FROM (
               SELECT c.id, c.attempt_count, coalesce(r.room, $7) AS room, coalesce(r.slots, $8) AS slots,
                      row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) AS n
                 FROM (SELECT id, endpoint_id, next_attempt_at, attempt_count FROM webhook_deliveries
                        WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
                          AND endpoint_id <> ALL ($4::uuid[])
                        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED) c
                 LEFT JOIN unnest($5::uuid[], $6::int[], $9::int[]) AS r(endpoint_id, room, slots) ON r.endpoint_id = c.endpoint_id) w
              WHERE w.n <= w.room) x
      WHERE d.id = x.id
      RETURNING d.id, d.endpoint_id AS "endpointId", d.event_id AS "eventId", d.event_type AS "eventType", ${DELIVERY_PAYLOAD} AS payload,
                d.attempt_count - CASE WHEN x.counted THEN 1 ELSE 0 END AS "attemptCount", x.counted`,
    [
      workerId,
      c.leaseSeconds,
      c.limit,
      c.excludedEndpointIds,
      c.rooms.map((r) => r.endpointId),
      c.rooms.map((r) => r.room),
      c.defaultRoom,
      c.defaultSlots,
      c.rooms.map((r) => r.slots),
      c.maxAttempts,
    ],
  );
  return rows.map((r) => ({ ...r, attemptCount: Number(r.attemptCount), counted: r.counted === true }));
}

/**
 * Counts an attempt on each delivery whose POST starts now, before it is sent (decision 0021): a
 * POST that kills its worker has still used an attempt, so a delivery that always does ends
 * failed after WEBHOOK_MAX_ATTEMPTS instead of being claimed again without end. One statement for
 * the POSTs starting together. Returns the ids counted (a lease this worker lost is not: not sent).
 */
export async function startDeliveryAttempts(
  db: Pick<Db, 'query'>,
  workerId: string,
  ids: string[],
): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `UPDATE webhook_deliveries SET attempt_count = attempt_count + 1
      WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND locked_until > now() AND status = 'pending'
      RETURNING id`,
    [ids, workerId],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Hands these claimed deliveries back at once (they did not fit this process's queues), and gives
 * back the attempt the claim counted on those of `counted` (not sent).
 */
export async function releaseDeliveries(
  db: Pick<Db, 'query'>,
  workerId: string,
  deliveries: Pick<ClaimedDelivery, 'id' | 'counted'>[],
): Promise<void> {
  const ids = deliveries.map((d) => d.id);
  const counted = deliveries.filter((d) => d.counted).map((d) => d.id);
  await db.query(
    `UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL,
            attempt_count = attempt_count - CASE WHEN id = ANY($3::uuid[]) THEN 1 ELSE 0 END
      WHERE id = ANY($1::uuid[]) AND locked_by = $2`,
    [ids, workerId, counted],
  );
}

/** Hands back every lease of this worker (graceful shutdown), so others need not wait for expiry. */
export async function releaseDeliveryLeases(db: Pick<Db, 'query'>, workerId: string): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL WHERE locked_by = $1', [
    workerId,
  ]);
}

const MAX_RESPONSE_BODY = 1024;

/**
 * Records a batch of outcomes in one statement, so one round trip and one transaction (issue #26:
 * it was BEGIN, three statements and COMMIT): the outcomes on the deliveries this worker still
 * holds, ending their lease; each HTTP try with the first KiB of the answer (a delivery's first
 * try in its own row, later ones in webhook_attempts: decision 0057); each
 * endpoint's last success and failure, moved forward (never back), in endpoint id order. A success
 * within a second of the stored one, on an endpoint whose stored state is healthy (no failure after
 * that success), leaves the endpoint row alone (decision 0046): it would rewrite it after every
 * batch of POSTs for a timestamp that moves by milliseconds. A first success, any failure and a
 * success after a failure are always written, so `lastSuccessAt` is at most a second behind and the
 * order of the two timestamps (what "failing" means) is exact.
 */
export async function recordOutcomes(
  db: Pick<Db, 'query'>,
  workerId: string,
  updates: DeliveryUpdate[],
  attempts: Attempt[],
  health: Map<string, EndpointHealth>,
): Promise<void> {
  const ids = [...health.keys()].sort();
  await db.query(
    `WITH tries AS (
       SELECT a.*, row_number() OVER (PARTITION BY a.delivery_id ORDER BY a.attempted_at, a.ord) AS nth
         FROM unnest($7::uuid[], $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[]) WITH ORDINALITY
              AS a(delivery_id, attempted_at, status_code, duration_ms, response_body, error, ord)),
     outcomes AS (
       -- A delivery's first try ever goes into its own row (decision 0057): the SET reads the row
       -- as it was, so a row with no first try yet takes this one; RETURNING reads it as written.
       UPDATE webhook_deliveries d SET status = t.status, attempt_count = t.attempts, next_attempt_at = t.next,
              last_status_code = COALESCE(t.code, d.last_status_code), locked_by = NULL, locked_until = NULL,
              completed_at = CASE WHEN t.status = 'pending' THEN NULL ELSE now() END,
              first_attempt_at = COALESCE(d.first_attempt_at, f.attempted_at),
              first_status_code = CASE WHEN d.first_attempt_at IS NULL THEN f.status_code ELSE d.first_status_code END,
              first_duration_ms = CASE WHEN d.first_attempt_at IS NULL THEN f.duration_ms ELSE d.first_duration_ms END,
              first_response_body = CASE WHEN d.first_attempt_at IS NULL THEN f.response_body ELSE d.first_response_body END,
              first_error = CASE WHEN d.first_attempt_at IS NULL THEN f.error ELSE d.first_error END
         FROM unnest($2::uuid[], $3::text[], $4::int[], $5::timestamptz[], $6::int[]) AS t(id, status, attempts, next, code)
              LEFT JOIN tries f ON f.delivery_id = t.id AND f.nth = 1
        WHERE d.id = t.id AND d.locked_by = $1
       RETURNING d.id, d.first_attempt_at IS NOT DISTINCT FROM f.attempted_at AND f.delivery_id IS NOT NULL AS took_first),
     attempts AS (
       -- The other tries. Only for deliveries still there: one deleted with its endpoint during the
       -- POST (a portal delete) would fail the foreign key and with it every outcome of the batch.
       -- Those this statement updated are locked by it (a delete waits); one whose lease was lost is checked.
       INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, response_body, error)
       SELECT a.delivery_id, a.attempted_at, a.status_code, a.duration_ms, a.response_body, a.error
         FROM tries a LEFT JOIN outcomes o ON o.id = a.delivery_id
        WHERE NOT (a.nth = 1 AND o.took_first IS TRUE)
          AND (o.id IS NOT NULL OR EXISTS (SELECT 1 FROM webhook_deliveries kept WHERE kept.id = a.delivery_id))
       RETURNING 1),
     health AS (
       UPDATE webhook_endpoints e SET
         last_success_at = CASE WHEN t.ok_at IS NULL THEN e.last_success_at ELSE greatest(e.last_success_at, t.ok_at) END,
         last_failure_at = CASE WHEN t.fail_at IS NULL THEN e.last_failure_at ELSE greatest(e.last_failure_at, t.fail_at) END,
         last_failure_reason = CASE WHEN t.fail_at IS NULL OR t.fail_at < e.last_failure_at THEN e.last_failure_reason ELSE t.reason END
         FROM unnest($13::uuid[], $14::timestamptz[], $15::timestamptz[], $16::text[]) AS t(id, ok_at, fail_at, reason)
        WHERE e.id = t.id
          AND NOT (t.fail_at IS NULL AND e.last_success_at IS NOT NULL
                   AND (e.last_failure_at IS NULL OR e.last_failure_at <= e.last_success_at)
                   AND t.ok_at < e.last_success_at + interval '${HEALTH_SUCCESS_GRAIN_MS} milliseconds')
       RETURNING 1)
     SELECT (SELECT count(*) FROM outcomes) + (SELECT count(*) FROM attempts) + (SELECT count(*) FROM health) AS n`,
    [
      workerId,
      updates.map((r) => r.id),
      updates.map((r) => r.status),
      updates.map((r) => r.attempts),
      updates.map((r) => r.next?.toISOString() ?? null),
      updates.map((r) => r.code),
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.at.toISOString()),
      attempts.map((a) => a.post.statusCode),
      attempts.map((a) => a.post.durationMs),
      attempts.map((a) => a.post.body?.slice(0, MAX_RESPONSE_BODY) ?? null),
      attempts.map((a) => a.post.error),
      ids,
      ids.map((id) => health.get(id)!.success?.toISOString() ?? null),
      ids.map((id) => health.get(id)!.failure?.toISOString() ?? null),
      ids.map((id) => health.get(id)!.reason),
    ],
  );
}

/** Moves endpoints' last success and failure forward alone (see recordOutcomes). */
export async function updateEndpointHealth(db: Pick<Db, 'query'>, health: Map<string, EndpointHealth>): Promise<void> {
  await recordOutcomes(db, '', [], [], health);
}

/** How far `lastSuccessAt` may lag the last success of a healthy endpoint (see updateEndpointHealth). */
export const HEALTH_SUCCESS_GRAIN_MS = 1000;
