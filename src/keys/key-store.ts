// The one writer of api_keys (ARCHITECTURE.md, "Who writes what"): a new key, its revocation and
// its "last used" time. Others read the table directly.
import type { Queryable } from '../db/db.js';

/** A new key: (id, customer, account, name, sandbox, template access, hash, sealed key, hint); `returning` the columns read back. */
export async function insertKey<Row>(tx: Pick<Queryable, 'query'>, returning: string, params: unknown[]): Promise<Row> {
  const rows = await tx.query<Row>(
    `INSERT INTO api_keys (id, customer_id, chat_account_id, name, sandbox, template_access, key_hash, key_enc, key_hint)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${returning}`,
    params,
  );
  return rows[0]!;
}

/** Revokes a key (of this customer, when one is given); its customer, or undefined when there is no such key. */
export async function revokeKey(
  tx: Pick<Queryable, 'query'>,
  id: string,
  customerId: string | null,
): Promise<string | undefined> {
  const rows = await tx.query<{ customer_id: string }>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
            WHERE id = $1 AND ($2::uuid IS NULL OR customer_id = $2::uuid) RETURNING customer_id`,
    [id, customerId],
  );
  return rows[0]?.customer_id;
}

/** Records that the key was just used. */
export async function touchKey(db: Pick<Queryable, 'query'>, keyId: string): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
}
