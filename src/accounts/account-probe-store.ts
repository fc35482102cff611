// The SQL of account probes: arming happens where the account is marked (send-accounts.ts); here
// due probes are claimed (one process per account at a time) and their outcomes written.
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
