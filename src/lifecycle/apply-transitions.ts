// Applying worker decisions to claimed messages in one statement, with their message.status
// events in the same transaction. A row whose lease this worker lost is left alone (no event).
import type { Queryable } from '../db/db.js';
import { writeEvents } from '../events/outbox.js';
import type { ProviderMediaRef } from '../provider/payload.js';
import type { MessageStatus } from '../shared/vocab.js';
import { releaseMedia } from './media-lifecycle.js';

export type SendErrorDetail = {
  code: string;
  message: string;
  provider?: {
    code: number | null;
    subcode: number | null;
    message: string | null;
    fbtraceId: string | null;
    source: 'send_attempt' | 'status_webhook';
  };
};

export type Transition = {
  id: string;
  from: MessageStatus;
  to: MessageStatus;
  /** When the transition happened (provider time when known). */
  at: Date;
  providerMessageId?: string;
  /** The media step's result: the file as uploaded to the provider. */
  providerMedia?: ProviderMediaRef;
  error?: SendErrorDetail;
  /** When a worker should act on the row next; null when nothing is left to do. */
  nextDueAt: Date | null;
  /** This transition is the outcome of a send attempt (counts in attemptCount). */
  attempted: boolean;
};

const EMITTING: readonly MessageStatus[] = ['sent', 'delivered', 'read', 'failed'];
const QUEUED: readonly MessageStatus[] = ['pending', 'queued'];

export async function applyTransitions(tx: Queryable, workerId: string, transitions: Transition[]): Promise<number> {
  if (transitions.length === 0) return 0;
  const rows = await tx.query<Record<string, unknown>>(
    `UPDATE messages m SET
        status = t.to_status,
        sent_at = CASE WHEN t.to_status = 'sent' THEN t.at ELSE m.sent_at END,
        delivered_at = CASE WHEN t.to_status = 'delivered' THEN t.at ELSE m.delivered_at END,
        read_at = CASE WHEN t.to_status = 'read' THEN t.at ELSE m.read_at END,
        failed_at = CASE WHEN t.to_status = 'failed' THEN t.at ELSE m.failed_at END,
        provider_message_id = COALESCE(t.provider_message_id, m.provider_message_id),
        provider_media = COALESCE(t.provider_media::jsonb, m.provider_media),
        error = CASE WHEN t.to_status = 'sent' THEN NULL ELSE COALESCE(t.error::jsonb, m.error) END,
        last_error_code = COALESCE(t.error::jsonb ->> 'code', m.last_error_code),
        attempt_count = m.attempt_count + CASE WHEN t.attempted THEN 1 ELSE 0 END,
        last_attempt_at = CASE WHEN t.attempted THEN t.at ELSE m.last_attempt_at END,
        due_at = t.due_at,
        locked_by = NULL,
        locked_until = NULL
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::timestamptz[], $9::boolean[], $10::text[])
            AS t(id, from_status, to_status, at, provider_message_id, error, due_at, attempted, provider_media)
      WHERE m.id = t.id AND m.locked_by = $1 AND m.status = t.from_status
      RETURNING m.id, m.customer_id, m.external_id, m.channel, m.recipient, m.chat_account_id, m.error, m.media_id,
                t.from_status, t.to_status, t.at`,
    [
      workerId,
      transitions.map((t) => t.id),
      transitions.map((t) => t.from),
      transitions.map((t) => t.to),
      transitions.map((t) => t.at.toISOString()),
      transitions.map((t) => t.providerMessageId ?? null),
      transitions.map((t) => (t.error ? JSON.stringify(t.error) : null)),
      transitions.map((t) => t.nextDueAt?.toISOString() ?? null),
      transitions.map((t) => t.attempted),
      transitions.map((t) => (t.providerMedia ? JSON.stringify(t.providerMedia) : null)),
    ],
  );
  // Uploads whose messages have all left the queue are deleted now.
  const done = rows
    .filter((r) => r.media_id !== null && !QUEUED.includes(r.to_status as MessageStatus))
    .map((r) => r.media_id as string);
  if (done.length > 0) await releaseMedia(tx, [...new Set(done)]);
  await writeEvents(
    tx,
    rows
      .filter((r) => EMITTING.includes(r.to_status as MessageStatus) && r.to_status !== r.from_status)
      .map((r) => ({
        customerId: r.customer_id as string,
        type: 'message.status' as const,
        createdAt: new Date(),
        data: {
          messageId: r.id,
          externalId: r.external_id,
          status: r.to_status,
          previousStatus: r.from_status,
          channel: r.channel,
          recipient: r.recipient,
          chatAccountId: r.chat_account_id,
          timestamp: (r.at as Date).toISOString(),
          error: r.to_status === 'failed' ? publicEventError(r.error) : null,
        },
      })),
  );
  return rows.length;
}

/** The event's error: `{ code, message, provider? }`, provider without its internal `source`. */
function publicEventError(raw: unknown) {
  const e = raw as SendErrorDetail | null;
  if (!e) return null;
  if (!e.provider) return { code: e.code, message: e.message };
  const { source: _source, ...provider } = e.provider;
  return { code: e.code, message: e.message, provider };
}
