// The webhook deliveries' reads: a delivery's body, the endpoints the deliverer posts to, the
// failed deliveries a replay would queue. Their writes (claim, attempts, outcomes, replays) are
// the lifecycle's, the ledger's one writer (lifecycle/record-deliveries.ts, requeue-deliveries.ts).
import type { Db } from '../db/db.js';
import { DELIVERY_PAYLOAD } from '../lifecycle/record-deliveries.js';
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
