// The SQL of the template catalog: the sealed management credential, and when it last worked.
import type { Queryable } from '../db/db.js';

/** The account's WABA and sealed management token (null when none is loaded). */
export async function loadManagementCredential(
  db: Queryable,
  customerId: string,
  accountId: string,
): Promise<{ wabaId: string; sealedToken: string } | null> {
  const rows = await db.query<{ waba_id: string | null; management_token_enc: string | null }>(
    'SELECT waba_id, management_token_enc FROM chat_accounts WHERE customer_id = $1 AND id = $2',
    [customerId, accountId],
  );
  const r = rows[0];
  return r?.waba_id && r.management_token_enc ? { wabaId: r.waba_id, sealedToken: r.management_token_enc } : null;
}

/**
 * Records that a management call just succeeded with this sealed credential; nothing changes when
 * the operator replaced it meanwhile. True when the row changed.
 */
export async function markManagementVerified(
  tx: Queryable,
  customerId: string,
  accountId: string,
  sealedToken: string,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE chat_accounts SET template_management_verified_at = now()
      WHERE customer_id = $1 AND id = $2 AND management_token_enc = $3 RETURNING id`,
    [customerId, accountId, sealedToken],
  );
  return rows.length > 0;
}
