// The public Message shape (GET /messages/{id}, items of GET /messages).
import type { SendErrorDetail } from '../lifecycle/transitions.js';
import type { ReceiptPricing } from '../provider/parse-webhook.js';
import type { MessageStatus } from '../shared/vocab.js';

export const MESSAGE_COLUMNS = `id, external_id, recipient, channel, status, attempt_count, max_attempts, last_error_code,
  broadcast_id, chat_account_id, created_at, sent_at, delivered_at, read_at, failed_at, provider_message_id,
  expires_at, sandbox, error, metadata, due_at, locked_until, last_attempt_at, scheduled_at, pricing,
  recipient_user_id`;

type Row = Record<string, unknown>;

const iso = (v: unknown): string | null =>
  v instanceof Date ? v.toISOString() : v == null ? null : new Date(String(v)).toISOString();

/**
 * queueState: `waiting` (accepted, not yet picked up), `in_flight` (a worker holds it now),
 * `retry_scheduled` (a transient failure; next try at nextAttemptAt), `done` (left the queue).
 */
function queueState(r: Row, now: Date): string {
  const status = r.status as MessageStatus;
  if (status !== 'pending' && status !== 'queued') return 'done';
  const lockedUntil = r.locked_until as Date | null;
  if (lockedUntil !== null && lockedUntil > now) return 'in_flight';
  return Number(r.attempt_count) > 0 ? 'retry_scheduled' : 'waiting';
}

export function toMessage(r: Row, now = new Date()) {
  const status = r.status as MessageStatus;
  const open = status === 'pending' || status === 'queued';
  return {
    messageId: r.id as string,
    externalId: r.external_id as string,
    recipient: r.recipient as string,
    /** The user id the send addressed (addition, decision 0036); null for a send to a number. */
    recipientUserId: (r.recipient_user_id as string | null) ?? null,
    channel: r.channel as string,
    status,
    attemptCount: Number(r.attempt_count),
    lastErrorCode: (r.last_error_code as string | null) ?? null,
    broadcastId: (r.broadcast_id as string | null) ?? null,
    chatAccountId: r.chat_account_id as string,
    createdAt: iso(r.created_at)!,
    /** A scheduled send's `sendAt` (kept once sent); null for a send that was due at once. */
    scheduledAt: iso(r.scheduled_at),
    sentAt: iso(r.sent_at),
    deliveredAt: iso(r.delivered_at),
    readAt: iso(r.read_at),
    failedAt: iso(r.failed_at),
    providerMessageId: (r.provider_message_id as string | null) ?? null,
    expiresAt: iso(r.expires_at)!,
    sandbox: r.sandbox as boolean,
    processing: {
      queueState: queueState(r, now),
      attemptCount: Number(r.attempt_count),
      maxAttempts: Number(r.max_attempts),
      nextAttemptAt: open ? iso(r.due_at) : null,
      lastAttemptAt: iso(r.last_attempt_at),
    },
    error: (r.error as SendErrorDetail | null) ?? null,
    metadata: (r.metadata as Record<string, unknown> | null) ?? null,
    /** What it costs, as the provider's receipt said (addition, issue #25); null until priced. */
    pricing: (r.pricing as ReceiptPricing | null) ?? null,
  };
}

export type Message = ReturnType<typeof toMessage>;
