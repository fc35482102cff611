// The management statements of webhook_endpoints (endpoint-service.ts). The table's writer is the
// ledger (ARCHITECTURE.md, "Who writes what"): the health columns move forward in the statement
// that records the deliveries' outcomes (record-deliveries.ts), so the rows are written here too.
import type { Db, Queryable } from '../db/db.js';

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
