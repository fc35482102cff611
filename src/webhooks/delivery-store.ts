// The webhook deliveries' reads (a delivery's body, the endpoints the deliverer posts to, the
// failed deliveries a replay would queue) and the deliverer's one outcome statement, which writes
// the deliveries and attempts with the lifecycle's statements (the ledger's one writer:
// lifecycle/record-deliveries.ts, requeue-deliveries.ts) and the endpoints' health.
import type { Db } from '../db/db.js';
import {
  type Attempt,
  DELIVERY_ATTEMPTS_INSERT,
  DELIVERY_OUTCOMES_UPDATE,
  DELIVERY_PAYLOAD,
  type DeliveryUpdate,
  type EndpointHealth,
} from '../lifecycle/record-deliveries.js';
import { MAX_REPLAY } from '../lifecycle/requeue-deliveries.js';
import type { Sealer } from '../shared/crypto.js';

export { MAX_REPLAY };

export type Endpoint = { id: string; url: string; isActive: boolean; secrets: string[] };

/**
 * The body of one of a customer's deliveries, exactly as it is sent and signed on every attempt
 * (null: no such delivery). The one place a delivery's body is read outside the deliverer's claim.
 */
export async function deliveryPayload(
  db: Pick<Db, 'query'>,
  customerId: string,
  deliveryId: string,
): Promise<string | null> {
  const [row] = await db.query<{ payload: string | null }>(
    `SELECT ${DELIVERY_PAYLOAD} AS payload FROM webhook_deliveries d WHERE d.customer_id = $1 AND d.id = $2`,
    [customerId, deliveryId],
  );
  return row?.payload ?? null;
}

/** The endpoints as they are now, with their signing secrets opened (the previous one while it lasts). */
export async function loadEndpoints(
  db: Pick<Db, 'query'>,
  sealer: Sealer,
  ids: string[],
): Promise<Map<string, Endpoint>> {
  const rows = await db.query<{
    id: string;
    url: string;
    is_active: boolean;
    secret_enc: string;
    previous_enc: string | null;
  }>(
    `SELECT id, url, is_active, secret_enc, CASE WHEN previous_secret_expires_at > now() THEN previous_secret_enc END AS previous_enc
       FROM webhook_endpoints WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        url: r.url,
        isActive: r.is_active,
        secrets: [r.secret_enc, r.previous_enc]
          .filter((s): s is string => typeof s === 'string')
          // The previous secret was the current one before a rotation: it keeps that binding.
          .map((s) => sealer.open(s, { table: 'webhook_endpoints', column: 'secret_enc', id: r.id })),
      },
    ]),
  );
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
       ${DELIVERY_OUTCOMES_UPDATE}),
     attempts AS (
       ${DELIVERY_ATTEMPTS_INSERT}),
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

/**
 * How many failed deliveries of one endpoint were created in [since, until), counted up to
 * MAX_REPLAY + 1 (the replay's confirmation says "more than MAX_REPLAY" beyond).
 */
export async function countFailed(
  db: Pick<Db, 'query'>,
  customerId: string,
  endpointId: string,
  since: Date,
  until: Date,
): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM webhook_deliveries
      WHERE customer_id = $1 AND endpoint_id = $2 AND status = 'failed' AND created_at >= $3 AND created_at < $4
      LIMIT $5) f`,
    [customerId, endpointId, since.toISOString(), until.toISOString(), MAX_REPLAY + 1],
  );
  return Number(row?.n ?? 0);
}
