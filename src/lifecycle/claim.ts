// Claiming due messages: FOR UPDATE SKIP LOCKED so concurrent workers never take the same row,
// and a lease so a crashed worker's rows become claimable again once it expires.
import type { Db } from '../db/db.js';
import type { ProviderMediaRef, SendContent } from '../provider/payload.js';
import type { MessageStatus } from '../shared/vocab.js';

export type Claimed = {
  id: string;
  status: MessageStatus;
  recipient: string;
  sandbox: boolean;
  customerId: string;
  chatAccountId: string;
  content: SendContent;
  attemptCount: number;
  maxAttempts: number;
  /** The uploaded file the content refers to (POST /media), if any. */
  mediaId: string | null;
  /** The media as uploaded to the provider by the worker's media step; null until then. */
  providerMedia: ProviderMediaRef | null;
  /** The broadcast it belongs to, if any (a cancelled broadcast's messages are failed, not sent). */
  broadcastId: string | null;
};

export async function claimDue(
  db: Pick<Db, 'query'>,
  workerId: string,
  limit: number,
  leaseSeconds: number,
): Promise<Claimed[]> {
  const rows = await db.query<Record<string, unknown>>(
    `UPDATE messages m SET locked_by = $1, locked_until = now() + make_interval(secs => $2),
            status = CASE WHEN m.status = 'pending' THEN 'queued' ELSE m.status END
       FROM (SELECT id FROM messages
              WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())
              ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) d
      WHERE m.id = d.id
      RETURNING m.id, m.status, m.recipient, m.sandbox, m.customer_id, m.chat_account_id, m.content, m.attempt_count, m.max_attempts,
                m.media_id, m.provider_media, m.broadcast_id`,
    [workerId, leaseSeconds, limit],
  );
  return rows.map((r) => ({
    id: r.id as string,
    status: r.status as MessageStatus,
    recipient: r.recipient as string,
    sandbox: r.sandbox as boolean,
    customerId: r.customer_id as string,
    chatAccountId: r.chat_account_id as string,
    content: r.content as SendContent,
    attemptCount: Number(r.attempt_count),
    maxAttempts: Number(r.max_attempts),
    mediaId: (r.media_id as string | null) ?? null,
    providerMedia: (r.provider_media as ProviderMediaRef | null) ?? null,
    broadcastId: (r.broadcast_id as string | null) ?? null,
  }));
}

/** Hands back every lease of this worker (graceful shutdown), so others need not wait for expiry. */
export async function releaseLeases(db: Pick<Db, 'query'>, workerId: string): Promise<void> {
  await db.query('UPDATE messages SET locked_by = NULL, locked_until = NULL WHERE locked_by = $1', [workerId]);
}
