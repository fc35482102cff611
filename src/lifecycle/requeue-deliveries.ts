// Deliveries queued again with a fresh attempt budget, same event and body: one (the API's and the
// portal's redeliver) or an endpoint's failed ones in a period (the replay; webhooks/endpoint-service.ts).
import type { Queryable } from '../db/db.js';

/** Replays of failed deliveries queued at most per request (one statement, one transaction). */
export const MAX_REPLAY = 1000;

/**
 * Queues again, with a fresh attempt budget, the failed deliveries of one endpoint created in
 * [since, until), oldest first, at most MAX_REPLAY; returns how many were queued and whether
 * more failed ones are left in the period. Only `failed` rows move: running it twice queues
 * nothing more than what failed again in between.
 */
export async function requeueFailed(
  tx: Queryable,
  customerId: string,
  endpointId: string,
  since: Date,
  until: Date,
): Promise<{ queued: number; more: boolean }> {
  const rows = await tx.query<{ id: string }>(
    `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = now(), completed_at = NULL,
            locked_by = NULL, locked_until = NULL
      WHERE id IN (SELECT id FROM webhook_deliveries
                    WHERE customer_id = $1 AND endpoint_id = $2 AND status = 'failed' AND created_at >= $3 AND created_at < $4
                    ORDER BY created_at, id LIMIT $5 FOR UPDATE)
        AND status = 'failed'
      RETURNING id`,
    [customerId, endpointId, since.toISOString(), until.toISOString(), MAX_REPLAY],
  );
  const [left] = await tx.query<{ any: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE customer_id = $1 AND endpoint_id = $2 AND status = 'failed'
                     AND created_at >= $3 AND created_at < $4) AS any`,
    [customerId, endpointId, since.toISOString(), until.toISOString()],
  );
  return { queued: rows.length, more: left?.any === true };
}

/**
 * Queues one of an endpoint's deliveries again, whatever its state, and wakes the deliverer at
 * commit; returns its id and event, or nothing when the customer's endpoint has no such delivery.
 */
export async function requeueDelivery(
  tx: Queryable,
  customerId: string,
  endpointId: string,
  deliveryId: string,
): Promise<{ id: string; event_id: string }[]> {
  const updated = await tx.query<{ id: string; event_id: string }>(
    `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = now(), completed_at = NULL, locked_by = NULL, locked_until = NULL
      WHERE customer_id = $1 AND endpoint_id = $2 AND id = $3 RETURNING id, event_id`,
    [customerId, endpointId, deliveryId],
  );
  if (updated.length > 0) await tx.query(`SELECT pg_notify('chatgate_deliveries_ready', '')`);
  return updated;
}
