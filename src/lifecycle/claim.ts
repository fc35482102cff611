// Claiming due messages: FOR UPDATE SKIP LOCKED so concurrent workers never take the same row,
// and a lease so a crashed worker's rows become claimable again once it expires.
import type { Db, Queryable } from '../db/db.js';
import type { ProviderMediaRef, SendContent } from '../provider/payload.js';
import type { ReplyTarget } from '../shared/content.js';
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
  /** When it was accepted (the quota month it was charged to). */
  createdAt: Date;
  /** POST /messages requireReplyWindow: fail without a call when the reply window is closed. */
  requireReplyWindow: boolean;
  /** The earlier message it replies or reacts to (decision 0032), or null. */
  replyTarget: ReplyTarget | null;
  /** The code of its last send error, if any: an unconfirmed send is never sent again (decision 0061). */
  lastErrorCode: string | null;
  /**
   * The holder of the lease this claim replaced, or null: every step that finishes with a message
   * clears its lease, so a holder here is one whose lease expired with the message unfinished (a
   * worker that died, hung or lost its database): another worker's is a takeover.
   */
  previousHolder: string | null;
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
       FROM (SELECT id, locked_by AS previous_holder FROM messages
              WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())
              ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED) d
      WHERE m.id = d.id
      RETURNING d.previous_holder, m.id, m.status, m.recipient, m.sandbox, m.customer_id, m.chat_account_id, m.content, m.attempt_count, m.max_attempts,
                m.media_id, m.provider_media, m.broadcast_id, m.created_at, m.require_reply_window,
                m.reply_target, m.last_error_code`,
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
    createdAt: r.created_at as Date,
    requireReplyWindow: r.require_reply_window === true,
    replyTarget: (r.reply_target as ReplyTarget | null) ?? null,
    lastErrorCode: (r.last_error_code as string | null) ?? null,
    previousHolder: (r.previous_holder as string | null) ?? null,
  }));
}

/** Messages due now and not finished (claimed or not): the queue a worker's activity line reports. */
export async function countDue(db: Pick<Db, 'query'>): Promise<number> {
  const rows = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE due_at <= now()');
  return Number(rows[0]?.n ?? 0);
}

/**
 * Counts an attempt on each message whose send (or media step) starts now, before the provider
 * is called (decision 0021): a send that kills its worker has still used an attempt, so a message
 * that always does ends failed (SEND_INTERRUPTED) instead of being claimed again without end. One
 * statement for the sends starting together; only the messages of a claim whose slot came are
 * counted, never the rest of the batch. Returns the ids counted: a message whose lease this worker
 * lost is not counted, and must not be sent (its new holder sends it).
 */
export async function startAttempts(db: Pick<Db, 'query'>, workerId: string, ids: string[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `UPDATE messages SET attempt_count = attempt_count + 1, last_attempt_at = now()
      WHERE id = ANY($1::uuid[]) AND locked_by = $2 AND locked_until > now() AND status IN ('pending', 'queued')
      RETURNING id`,
    [ids, workerId],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Extends this worker's lease on these messages to `leaseSeconds` from now, while no other worker
 * holds them (even past its end: a message nobody claimed since is still ours). Returns the ids
 * still held. Used while an outcome that could not be written is kept and written again, so that
 * no other worker claims a message already sent and sends it twice (decision 0061).
 */
export async function extendLeases(
  db: Pick<Db, 'query'>,
  workerId: string,
  ids: string[],
  leaseSeconds: number,
): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `UPDATE messages SET locked_until = now() + make_interval(secs => $3)
      WHERE id = ANY($1::uuid[]) AND locked_by = $2
      RETURNING id`,
    [ids, workerId, leaseSeconds],
  );
  return new Set(rows.map((r) => r.id));
}

/** Hands back every lease of this worker (graceful shutdown), so others need not wait for expiry. */
export async function releaseLeases(db: Pick<Db, 'query'>, workerId: string): Promise<void> {
  await db.query('UPDATE messages SET locked_by = NULL, locked_until = NULL WHERE locked_by = $1', [workerId]);
}

/** What a cancel holds: one message (by id), or every message of one broadcast. */
export type UnsentTarget = { messageId: string } | { broadcastId: string };

/**
 * A cancel's own claim: leases (to `holder`, for a minute) the customer's messages of `target`
 * that have not left and that no worker holds, so the cancel can fail them with the usual
 * transitions (failUnsent). A message a worker holds is not taken: its send is under way.
 */
export async function holdUnsent(
  tx: Queryable,
  customerId: string,
  target: UnsentTarget,
  holder: string,
): Promise<{ id: string; status: 'pending' | 'queued' }[]> {
  const [column, id] = 'messageId' in target ? ['id', target.messageId] : ['broadcast_id', target.broadcastId];
  return tx.query<{ id: string; status: 'pending' | 'queued' }>(
    `UPDATE messages SET locked_by = $3, locked_until = now() + interval '1 minute'
      WHERE customer_id = $1 AND ${column} = $2 AND status IN ('pending', 'queued')
        AND (locked_until IS NULL OR locked_until < now())
      RETURNING id, status`,
    [customerId, id, holder],
  );
}

/**
 * When the next message becomes due, if any is due later than now: an idle dispatcher sleeps
 * until then (a scheduled send leaves on time whatever the poll interval). One read of the
 * due-time index (messages_due). The wait is measured on the database's clock, which decides
 * what is due, and returned on this process's clock: a worker whose clock is ahead would
 * otherwise find the time already past and wait for the poll instead.
 */
export async function nextDueTime(db: Pick<Db, 'query'>): Promise<Date | null> {
  const [row] = await db.query<{ ms: number | string | null }>(
    'SELECT (extract(epoch FROM min(due_at) - now()) * 1000)::float8 AS ms FROM messages WHERE due_at > now()',
  );
  return row?.ms != null ? new Date(Date.now() + Number(row.ms)) : null;
}
