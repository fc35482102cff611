// What a worker needs to send through an account, secrets unsealed only here and only in memory.
import type { Db } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import type { AccountStatus } from '../shared/vocab.js';
import { PROBED_ACCOUNT_ERRORS } from './account-probe-policy.js';
import {
  ACCOUNT_COLUMNS,
  type AccountRecord,
  type AccountRow,
  openAccessToken,
  toAccountRecord,
} from './account-record.js';
import { markAccountRow } from './account-store.js';

/** The account record plus its unsealed token (null when missing or sealed with another key). */
export type SendAccount = AccountRecord & { accessToken: string | null };

export async function loadSendAccounts(
  db: Pick<Db, 'query'>,
  sealer: Sealer,
  ids: string[],
): Promise<Map<string, SendAccount>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<AccountRow & { access_token_enc: string | null }>(
    `SELECT ${ACCOUNT_COLUMNS}, access_token_enc FROM chat_accounts WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { ...toAccountRecord(r), accessToken: openAccessToken(sealer, r) }]));
}

/**
 * Marks an account after an account-level provider error, so its other messages stop at once.
 * A mark that may be transient (a rejected token) arms the account prober: first probe after
 * `firstProbeDelayMs`; any other mark ends a probe in progress.
 */
export async function markAccountError(
  q: Pick<Db, 'query'>,
  accountId: string,
  status: AccountStatus,
  errorCode: string,
  firstProbeDelayMs: number,
): Promise<void> {
  const probeDelayMs = PROBED_ACCOUNT_ERRORS.has(errorCode) ? firstProbeDelayMs : null;
  // A NULL delay gives a NULL probe_next_at: not probed.
  await markAccountRow(q, accountId, status, errorCode, probeDelayMs);
}
