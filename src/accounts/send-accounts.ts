// What a worker needs to send through an account, secrets unsealed only here and only in memory.
import type { Db } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import type { AccountStatus, AccountType, SendPolicyMode } from '../shared/vocab.js';

export type SendAccount = {
  id: string;
  customerId: string;
  type: AccountType;
  status: AccountStatus;
  lastErrorCode: string | null;
  phoneNumberId: string | null;
  accessToken: string | null;
  sendPolicyMode: SendPolicyMode;
  testRecipients: Set<string>;
  throughputMps: number;
};

export async function loadSendAccounts(db: Pick<Db, 'query'>, sealer: Sealer, ids: string[]): Promise<Map<string, SendAccount>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<Record<string, unknown>>(
    `SELECT id, customer_id, type, status, last_error_code, phone_number_id, access_token_enc, send_policy_mode, test_recipients, throughput_mps
       FROM chat_accounts WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(
    rows.map((r) => {
      let accessToken: string | null = null;
      try {
        accessToken = r.access_token_enc ? sealer.open(r.access_token_enc as string) : null;
      } catch {
        accessToken = null; // sealed with another key: treated as a missing credential
      }
      return [
        r.id as string,
        {
          id: r.id as string,
          customerId: r.customer_id as string,
          type: r.type as AccountType,
          status: r.status as AccountStatus,
          lastErrorCode: (r.last_error_code as string | null) ?? null,
          phoneNumberId: (r.phone_number_id as string | null) ?? null,
          accessToken,
          sendPolicyMode: ((r.send_policy_mode as SendPolicyMode | null) ?? 'GLOBAL'),
          testRecipients: new Set((r.test_recipients as string[] | null) ?? []),
          throughputMps: Number(r.throughput_mps),
        },
      ];
    }),
  );
}

/** Marks an account after an account-level provider error, so its other messages stop at once. */
export async function markAccountError(q: Pick<Db, 'query'>, accountId: string, status: AccountStatus, errorCode: string): Promise<void> {
  await q.query(`UPDATE chat_accounts SET status = $2, last_error_code = $3, updated_at = now() WHERE id = $1`, [accountId, status, errorCode]);
}
