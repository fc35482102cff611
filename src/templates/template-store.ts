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

// Written by the accounts' store (the one writer of chat_accounts).
export { markManagementVerified } from '../accounts/account-store.js';
