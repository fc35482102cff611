// The one writer of chat_accounts (ARCHITECTURE.md, "Who writes what"): every INSERT and UPDATE of
// the table is here; other modules read it directly and change it through these functions.
// Account probes: arming happens where the account is marked (markAccountError); here due probes
// are claimed (one process per account at a time) and their outcomes written.
import type { Db, Queryable } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import { openAccessToken } from './account-record.js';

export type DueProbe = {
  accountId: string;
  customerId: string;
  phoneNumberId: string | null;
  /** Unsealed in memory only; null when missing or sealed with another key. */
  accessToken: string | null;
  /** Probes that failed since the account was marked. */
  attempts: number;
  /** The claim: the lease written to probe_next_at. An outcome is written only while it still holds. */
  claim: Date;
};

/**
 * Claims due probes: FOR UPDATE SKIP LOCKED, and probe_next_at moved to the end of a lease, so no
 * other process takes them until the lease ends. The lease is cut to milliseconds so that it
 * compares equal once it has been through a JavaScript Date.
 */
export async function claimDueProbes(
  db: Pick<Db, 'query'>,
  sealer: Sealer,
  limit: number,
  leaseSeconds: number,
): Promise<DueProbe[]> {
  const rows = await db.query<{
    id: string;
    customer_id: string;
    phone_number_id: string | null;
    access_token_enc: string | null;
    probe_attempts: number;
    probe_next_at: Date;
  }>(
    `UPDATE chat_accounts a SET probe_next_at = date_trunc('milliseconds', now()) + make_interval(secs => $2)
       FROM (SELECT id FROM chat_accounts WHERE probe_next_at <= now()
              ORDER BY probe_next_at LIMIT $1 FOR UPDATE SKIP LOCKED) d
      WHERE a.id = d.id
      RETURNING a.id, a.customer_id, a.phone_number_id, a.access_token_enc, a.probe_attempts, a.probe_next_at`,
    [limit, leaseSeconds],
  );
  return rows.map((r) => ({
    accountId: r.id,
    customerId: r.customer_id,
    phoneNumberId: r.phone_number_id,
    accessToken: openAccessToken(sealer, r),
    attempts: r.probe_attempts,
    claim: r.probe_next_at,
  }));
}

/**
 * The token was accepted: the account is CONNECTED again (or at last: one linked with a token
 * that could not be checked waits as AUTHENTICATING, decision 0072) and no longer probed
 * (lastErrorCode is kept as history). False when the claim no longer holds (an operator edit or a new mark won).
 */
export async function recordProbeAccepted(tx: Queryable, probe: DueProbe): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE chat_accounts SET status = 'CONNECTED', connected_at = now(), probe_next_at = NULL, probe_attempts = 0,
            updated_at = now()
      WHERE id = $1 AND probe_next_at = $2 AND status IN ('ERROR', 'AUTHENTICATING')
      RETURNING id`,
    [probe.accountId, probe.claim],
  );
  return rows.length > 0;
}

/** The probe failed: one more attempt, the next one after `delayMs`. Null when the claim no longer holds. */
export async function recordProbeFailed(
  db: Pick<Db, 'query'>,
  probe: DueProbe,
  delayMs: number,
): Promise<{ attempts: number; nextAt: Date } | null> {
  const [row] = await db.query<{ probe_attempts: number; probe_next_at: Date }>(
    `UPDATE chat_accounts SET probe_attempts = probe_attempts + 1,
            probe_next_at = now() + make_interval(secs => $3::float8 / 1000)
      WHERE id = $1 AND probe_next_at = $2
      RETURNING probe_attempts, probe_next_at`,
    [probe.accountId, probe.claim, delayMs],
  );
  return row ? { attempts: row.probe_attempts, nextAt: row.probe_next_at } : null;
}

/** Inserts an account row; `params` are the 20 values in the column order below ($1..$20). */
export async function insertAccountRow(tx: Queryable, params: unknown[]): Promise<void> {
  await tx.query(
    `INSERT INTO chat_accounts (id, customer_id, type, status, phone_number, display_name, connected_at,
        phone_number_id, waba_id, access_token_enc, app_secret_enc, integration_id, management_token_enc,
        waba_verification, verified_name, send_policy_mode, test_recipients, throughput_mps, marketing_messages_api,
        portfolio_id, throughput_level, probe_next_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $4 = 'CONNECTED' THEN now() END,
        $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, CASE WHEN $21 THEN now() END)`,
    params,
  );
}

/** Applies an operator's edit: `sets` are "column = $n" assignments over `params` ($1 is the id). */
export async function updateAccountColumns(tx: Queryable, sets: string[], params: unknown[]): Promise<void> {
  await tx.query(`UPDATE chat_accounts SET ${sets.join(', ')}, updated_at = now() WHERE id = $1`, params);
}

/**
 * Marks an account after an account-level provider error; `probeDelayMs` null means not probed
 * (a NULL delay gives a NULL probe_next_at).
 */
export async function markAccountRow(
  q: Pick<Db, 'query'>,
  accountId: string,
  status: string,
  errorCode: string,
  probeDelayMs: number | null,
): Promise<void> {
  await q.query(
    `UPDATE chat_accounts SET status = $2, last_error_code = $3, updated_at = now(),
            probe_next_at = now() + make_interval(secs => $4::float8 / 1000), probe_attempts = 0
      WHERE id = $1`,
    [accountId, status, errorCode, probeDelayMs],
  );
}

/** Records a throughput level read and its ceiling; the new ceiling, or null when the level did not change. */
export async function updateThroughputLevel(
  q: Queryable,
  accountId: string,
  level: string,
  mps: number,
): Promise<number | null> {
  const rows = await q.query<{ throughput_mps: number }>(
    `UPDATE chat_accounts SET throughput_level = $2, throughput_mps = $3, updated_at = now()
      WHERE id = $1 AND throughput_level IS DISTINCT FROM $2
      RETURNING throughput_mps`,
    [accountId, level, mps],
  );
  return rows.length === 0 ? null : rows[0]!.throughput_mps;
}

/** Until when the account's marketing templates go over /messages (a Marketing Messages API refusal). */
export async function holdMarketingUntil(db: Pick<Db, 'query'>, accountId: string, until: Date): Promise<void> {
  await db.query(`UPDATE chat_accounts SET marketing_messages_refused_until = $2 WHERE id = $1`, [accountId, until]);
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
