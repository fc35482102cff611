// The public Message shape (GET /messages/{id}, items of GET /messages).
import type { SendErrorDetail } from '../lifecycle/transitions.js';
import type { ReceiptPricing } from '../provider/parse-webhook.js';
import type { MessageStatus } from '../shared/vocab.js';

export const MESSAGE_COLUMNS = `id, external_id, recipient, channel, status, attempt_count, max_attempts, last_error_code,
  broadcast_id, chat_account_id, created_at, sent_at, delivered_at, read_at, failed_at, provider_message_id,
  expires_at, sandbox, error, metadata, due_at, locked_until, last_attempt_at, scheduled_at, pricing,
  recipient_user_id, provider_route`;

/** A row of MESSAGE_COLUMNS as the database returns it. */
export type MessageRow = {
  id: string;
  external_id: string;
  recipient: string;
  channel: string;
  status: MessageStatus;
  attempt_count: number;
  max_attempts: number;
  last_error_code: string | null;
  broadcast_id: string | null;
  chat_account_id: string;
  created_at: Date;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  failed_at: Date | null;
  provider_message_id: string | null;
  expires_at: Date;
  sandbox: boolean;
  error: SendErrorDetail | null;
  metadata: Record<string, unknown> | null;
  due_at: Date | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  scheduled_at: Date | null;
  pricing: ReceiptPricing | null;
  recipient_user_id: string | null;
  provider_route: string | null;
};

const iso = (v: unknown): string | null =>
  v instanceof Date ? v.toISOString() : v == null ? null : new Date(String(v)).toISOString();

/**
 * queueState: `waiting` (accepted, not yet picked up), `in_flight` (a worker holds it now),
 * `retry_scheduled` (a transient failure; next try at nextAttemptAt), `done` (left the queue).
 */
function queueState(r: MessageRow, now: Date): string {
  const status = r.status;
  if (status !== 'pending' && status !== 'queued') return 'done';
  const lockedUntil = r.locked_until;
  if (lockedUntil !== null && lockedUntil > now) return 'in_flight';
  return r.attempt_count > 0 ? 'retry_scheduled' : 'waiting';
}

export function toMessage(r: MessageRow, now = new Date()) {
  const status = r.status;
  const open = status === 'pending' || status === 'queued';
  return {
    messageId: r.id,
    externalId: r.external_id,
    recipient: r.recipient,
    /** The user id the send addressed (addition, decision 0036); null for a send to a number. */
    recipientUserId: r.recipient_user_id,
    channel: r.channel,
    status,
    attemptCount: r.attempt_count,
    lastErrorCode: r.last_error_code,
    broadcastId: r.broadcast_id,
    chatAccountId: r.chat_account_id,
    createdAt: iso(r.created_at)!,
    /** A scheduled send's `sendAt` (kept once sent); null for a send that was due at once. */
    scheduledAt: iso(r.scheduled_at),
    sentAt: iso(r.sent_at),
    deliveredAt: iso(r.delivered_at),
    readAt: iso(r.read_at),
    failedAt: iso(r.failed_at),
    providerMessageId: r.provider_message_id,
    expiresAt: iso(r.expires_at)!,
    sandbox: r.sandbox,
    processing: {
      queueState: queueState(r, now),
      attemptCount: r.attempt_count,
      maxAttempts: r.max_attempts,
      nextAttemptAt: open ? iso(r.due_at) : null,
      lastAttemptAt: iso(r.last_attempt_at),
      /**
       * The provider endpoint that carried the send (decision 0038); null until sent. A live send
       * whose outcome was recorded after its receipt (or made before routes were kept) went over
       * /messages: only the Marketing Messages API route is sure to be stored.
       */
      route: r.provider_route ?? (r.provider_message_id && r.sandbox !== true ? 'messages' : null),
    },
    error: r.error,
    metadata: r.metadata,
    /** What it costs, as the provider's receipt said (addition, issue #25); null until priced. */
    pricing: r.pricing,
  };
}

export type Message = ReturnType<typeof toMessage>;
