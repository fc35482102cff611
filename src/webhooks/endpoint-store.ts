// The one writer of webhook_endpoints (ARCHITECTURE.md, "Who writes what"): the management
// statements of endpoint-service.ts, and the health columns the delivery flush moves forward in
// its own statement (ENDPOINT_HEALTH_UPDATE, a data-modifying CTE of delivery-store.ts).
import type { Db, Queryable } from '../db/db.js';

/** How far `lastSuccessAt` may lag the last success of a healthy endpoint (see updateEndpointHealth). */
export const HEALTH_SUCCESS_GRAIN_MS = 1000;

/**
 * Moves endpoints' last success and failure forward, from the flush's parameters $13 (endpoint
 * ids), $14 (last success), $15 (last failure) and $16 (its reason).
 */
export const ENDPOINT_HEALTH_UPDATE = `UPDATE webhook_endpoints e SET
         last_success_at = CASE WHEN t.ok_at IS NULL THEN e.last_success_at ELSE greatest(e.last_success_at, t.ok_at) END,
         last_failure_at = CASE WHEN t.fail_at IS NULL THEN e.last_failure_at ELSE greatest(e.last_failure_at, t.fail_at) END,
         last_failure_reason = CASE WHEN t.fail_at IS NULL OR t.fail_at < e.last_failure_at THEN e.last_failure_reason ELSE t.reason END
         FROM unnest($13::uuid[], $14::timestamptz[], $15::timestamptz[], $16::text[]) AS t(id, ok_at, fail_at, reason)
        WHERE e.id = t.id
          AND NOT (t.fail_at IS NULL AND e.last_success_at IS NOT NULL
                   AND (e.last_failure_at IS NULL OR e.last_failure_at <= e.last_success_at)
                   AND t.ok_at < e.last_success_at + interval '${HEALTH_SUCCESS_GRAIN_MS} milliseconds')`;

export const COLUMNS =
  'id, url, description, events, is_active, last_success_at, last_failure_at, last_failure_reason, created_at, updated_at';

/** A row of COLUMNS as the database returns it. */
export type EndpointRow = {
  id: string;
  url: string;
  description: string;
  events: string[];
  is_active: boolean;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
};

/** A new endpoint: (id, customer, url, description, events, sealed secret, sandbox). */
export async function insertEndpoint(tx: Queryable, params: unknown[]): Promise<EndpointRow> {
  const rows = await tx.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, customer_id, url, description, events, secret_enc, sandbox) VALUES ($1, $2, $3, $4, $5::text[], $6, $7) RETURNING ${COLUMNS}`,
    params,
  );
  return rows[0]!;
}

/** The fields given (null: unchanged): (customer, id, url, events, description, isActive, sandbox). */
export async function updateEndpointRow(tx: Queryable, params: unknown[]): Promise<EndpointRow | undefined> {
  const rows = await tx.query<EndpointRow>(
    `UPDATE webhook_endpoints SET url = COALESCE($3, url), events = COALESCE($4::text[], events),
              description = COALESCE($5, description), is_active = COALESCE($6, is_active), updated_at = now()
        WHERE customer_id = $1 AND id = $2 AND sandbox = $7 RETURNING ${COLUMNS}`,
    params,
  );
  return rows[0];
}

/**
 * A new sealed secret, the replaced one kept for an overlap (see endpoint-service.ts rotateSecret):
 * (customer, id, sealed secret, overlap hours, sandbox).
 */
export async function rotateEndpointSecret(
  db: Pick<Db, 'query'>,
  params: unknown[],
): Promise<(EndpointRow & { previous_secret_expires_at: Date }) | undefined> {
  // Every right-hand side reads the row as it was before this UPDATE.
  const rows = await db.query<EndpointRow & { previous_secret_expires_at: Date }>(
    `UPDATE webhook_endpoints
        SET previous_secret_enc = CASE WHEN previous_secret_expires_at > now() THEN previous_secret_enc ELSE secret_enc END,
            previous_secret_expires_at = CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at
                                              ELSE now() + make_interval(hours => $4) END,
            secret_enc = $3, updated_at = now()
      WHERE customer_id = $1 AND id = $2 AND sandbox = $5 RETURNING ${COLUMNS}, previous_secret_expires_at`,
    params,
  );
  return rows[0];
}

/** Deletes the endpoint with its delivery history (cascade); false when there was none. */
export async function deleteEndpoint(
  db: Pick<Db, 'query'>,
  customerId: string,
  sandbox: boolean,
  id: string,
): Promise<boolean> {
  const rows = await db.query(
    'DELETE FROM webhook_endpoints WHERE customer_id = $1 AND sandbox = $2 AND id = $3 RETURNING id',
    [customerId, sandbox, id],
  );
  return rows.length > 0;
}
