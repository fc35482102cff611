// The SQL of inbound files (decision 0034): rows recorded at ingestion, due rows claimed by the
// fetcher under a lease (SKIP LOCKED), its outcomes, and what the API reads of them.
import { notifyAfterCommit, type Queryable } from '../db/db.js';
import type { InboundMediaRef } from '../provider/parse-inbound-media.js';

export const INBOUND_MEDIA_READY = 'inbound_media_ready';
/** The provider keeps a received file's media id for 7 days; we stop trying an hour before. */
export const PROVIDER_MEDIA_DAYS = 7;

/** Ingestion: one row per stored inbound message that carries a file, due at once. */
export async function recordInboundMedia(
  tx: Queryable,
  rows: {
    id: string;
    inboundMessageId: string;
    customerId: string;
    accountId: string;
    receivedAt: Date;
    media: InboundMediaRef;
  }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO inbound_media (id, inbound_message_id, customer_id, chat_account_id, provider_media_id, mime_type, sha256,
                                filename, next_attempt_at, give_up_at)
     SELECT id, m, c, a, pm, mt, sh, fn, now(), r + make_interval(days => ${PROVIDER_MEDIA_DAYS}) - interval '1 hour'
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
         AS t(id, m, c, a, pm, mt, sh, fn, r)
     ON CONFLICT (inbound_message_id) DO NOTHING`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.inboundMessageId),
      rows.map((r) => r.customerId),
      rows.map((r) => r.accountId),
      rows.map((r) => r.media.providerMediaId),
      rows.map((r) => r.media.mimeType),
      rows.map((r) => r.media.sha256),
      rows.map((r) => r.media.filename),
      rows.map((r) => r.receivedAt.toISOString()),
    ],
  );
  await notifyAfterCommit(tx, INBOUND_MEDIA_READY);
}

export type DueInboundMedia = {
  id: string;
  customerId: string;
  accountId: string;
  providerMediaId: string;
  mimeType: string | null;
  sha256: string | null;
  attempts: number;
  giveUpAt: Date;
  phoneNumberId: string | null;
  /** The account's id and sealed token (unsealed by the caller, in memory only). */
  account: { id: string; access_token_enc: string | null };
  /** The claim: the lease written to next_attempt_at; outcomes are written only while it holds. */
  claim: Date;
};

/** Claims due files: next_attempt_at moved to the lease's end, so no other process takes them. */
export async function claimDueInboundMedia(
  q: Queryable,
  limit: number,
  leaseSeconds: number,
): Promise<DueInboundMedia[]> {
  const rows = await q.query<Record<string, unknown>>(
    `UPDATE inbound_media f SET next_attempt_at = date_trunc('milliseconds', now()) + make_interval(secs => $2)
       FROM (SELECT id FROM inbound_media WHERE state = 'pending' AND next_attempt_at <= now()
              ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED) d, chat_accounts a
      WHERE f.id = d.id AND a.id = f.chat_account_id
      RETURNING f.id, f.customer_id, f.chat_account_id, f.provider_media_id, f.mime_type, f.sha256, f.attempts,
                f.give_up_at, f.next_attempt_at, a.phone_number_id, a.access_token_enc`,
    [limit, leaseSeconds],
  );
  return rows.map((r) => ({
    id: r.id as string,
    customerId: r.customer_id as string,
    accountId: r.chat_account_id as string,
    providerMediaId: r.provider_media_id as string,
    mimeType: (r.mime_type as string | null) ?? null,
    sha256: (r.sha256 as string | null) ?? null,
    attempts: Number(r.attempts),
    giveUpAt: r.give_up_at as Date,
    phoneNumberId: (r.phone_number_id as string | null) ?? null,
    account: { id: r.chat_account_id as string, access_token_enc: (r.access_token_enc as string | null) ?? null },
    claim: r.next_attempt_at as Date,
  }));
}

export type InboundMediaOutcome =
  | { state: 'fetched'; mimeType: string; size: number; sha256: string }
  | {
      state: 'failed' | 'skipped_too_large' | 'skipped_type';
      error: string;
      mimeType?: string | null;
      size?: number | null;
    }
  | { state: 'retry'; error: string; delayMs: number };

/**
 * Writes one attempt's outcome, if the claim still holds; a fetched file's bytes are written by
 * `putBytes` in the same transaction. Returns false when the claim was lost.
 */
export async function recordInboundMediaOutcome(
  tx: Queryable,
  due: DueInboundMedia,
  outcome: InboundMediaOutcome,
): Promise<boolean> {
  const set =
    outcome.state === 'retry'
      ? `attempts = attempts + 1, last_error = $3, next_attempt_at = now() + make_interval(secs => $4::float8 / 1000)`
      : outcome.state === 'fetched'
        ? `attempts = attempts + 1, state = 'fetched', last_error = NULL, next_attempt_at = NULL, fetched_at = now(),
           mime_type = $3, size_bytes = $4, sha256 = $5`
        : `attempts = attempts + 1, state = $5, last_error = $3, next_attempt_at = NULL,
           mime_type = COALESCE($6, mime_type), size_bytes = COALESCE($4, size_bytes)`;
  const params: unknown[] =
    outcome.state === 'retry'
      ? [due.id, due.claim, outcome.error, outcome.delayMs]
      : outcome.state === 'fetched'
        ? [due.id, due.claim, outcome.mimeType, outcome.size, outcome.sha256]
        : [due.id, due.claim, outcome.error, outcome.size ?? null, outcome.state, outcome.mimeType ?? null];
  const rows = await tx.query(
    `UPDATE inbound_media SET ${set} WHERE id = $1 AND state = 'pending' AND next_attempt_at = $2 RETURNING id`,
    params,
  );
  return rows.length > 0;
}
