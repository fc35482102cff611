// Applying one provider receipt to its message: status only moves forward (sent → delivered →
// read; failed only before delivery), each real step writes one message.status event with the
// provider's time, and a receipt that beats the send's own commit is parked, never lost.
import type { Queryable } from '../db/db.js';
import { writeEvents } from '../events/outbox.js';
import { classifyProviderError } from '../provider/error-map.js';
import type { ReceiptStatus, StatusReceipt } from '../provider/parse-webhook.js';
import { releaseMedia } from './media-lifecycle.js';
import { type EventMessage, messageStatusEvent } from './message-status-event.js';
import type { SendErrorDetail } from './transitions.js';

const RANK: Record<string, number> = { pending: -1, queued: -1, sent: 1, delivered: 2, read: 3, failed: 9 };
const FORWARD = ['sent', 'delivered', 'read'] as const;

/**
 * The forward-only rule: the statuses a receipt moves a message through from `current`, in order
 * (a `read` receipt for a queued message steps through sent and delivered); none when it is stale
 * or a duplicate. `failed` applies only before delivery.
 */
export function receiptSteps(current: string, receipt: ReceiptStatus): ReceiptStatus[] {
  const rank = RANK[current] ?? 9;
  if (receipt === 'failed') return rank <= 1 ? ['failed'] : [];
  return FORWARD.filter((s) => RANK[s]! > rank && RANK[s]! <= RANK[receipt]!);
}

type Row = EventMessage & { status: string; media_id: string | null };

/** Returns 'applied', 'ignored' (stale or duplicate) or 'parked' (no such message yet). */
export async function applyReceipt(
  tx: Queryable,
  accountId: string,
  r: StatusReceipt,
): Promise<'applied' | 'ignored' | 'parked'> {
  const m = await lockMessage(tx, accountId, r);
  if (!m) {
    await parkReceipt(tx, accountId, r);
    return 'parked';
  }
  const steps = receiptSteps(m.status, r.status);
  if (steps.length === 0) return 'ignored';
  const error = r.status === 'failed' ? receiptError(r) : null;
  await advanceMessage(tx, m.id, steps, r, error);
  // A receipt can take a message out of the queue (an answer lost after the provider accepted it).
  if (m.media_id !== null && (m.status === 'pending' || m.status === 'queued')) await releaseMedia(tx, [m.media_id]);
  const from = [m.status, ...steps];
  await writeEvents(
    tx,
    steps.map((to, i) => messageStatusEvent({ message: m, from: from[i]!, to, at: r.occurredAt, error })),
  );
  return 'applied';
}

/** A failed receipt's error, mapped through the provider's error table. */
function receiptError(r: StatusReceipt): SendErrorDetail {
  return {
    code: classifyProviderError(r.error?.code ?? null, null, null).errorCode,
    message: r.error?.details ?? r.error?.title ?? 'The provider reported the message as failed',
    provider: {
      code: r.error?.code ?? null,
      subcode: null,
      message: r.error?.title ?? null,
      fbtraceId: null,
      source: 'status_webhook',
    },
  };
}

/** The receipt's message, by provider id or by our own id echoed back (ours wins), locked. */
async function lockMessage(tx: Queryable, accountId: string, r: StatusReceipt): Promise<Row | undefined> {
  const rows = await tx.query<Row>(
    `SELECT id, customer_id AS "customerId", status, external_id AS "externalId", channel, recipient,
            chat_account_id AS "chatAccountId", media_id FROM messages
      WHERE chat_account_id = $1 AND (provider_message_id = $2 OR id = $3::uuid)
      ORDER BY (id = $3::uuid) IS TRUE DESC LIMIT 1 FOR UPDATE`,
    [accountId, r.providerMessageId, r.messageId],
  );
  return rows[0];
}

async function parkReceipt(tx: Queryable, accountId: string, r: StatusReceipt): Promise<void> {
  await tx.query(
    `INSERT INTO pending_receipts (chat_account_id, provider_message_id, status, occurred_at, error) VALUES ($1, $2, $3, $4, $5::text::jsonb)`,
    [accountId, r.providerMessageId, r.status, r.occurredAt.toISOString(), r.error ? JSON.stringify(r.error) : null],
  );
}

/** Moves the message to the last of `steps`, stamping each step's time; ends its retries and lease. */
async function advanceMessage(
  tx: Queryable,
  id: string,
  steps: ReceiptStatus[],
  r: StatusReceipt,
  error: SendErrorDetail | null,
): Promise<void> {
  await tx.query(
    `UPDATE messages SET status = $2,
        sent_at = CASE WHEN $3::boolean THEN COALESCE(sent_at, $6::timestamptz) ELSE sent_at END,
        delivered_at = CASE WHEN $4::boolean THEN COALESCE(delivered_at, $6::timestamptz) ELSE delivered_at END,
        read_at = CASE WHEN $5::boolean THEN COALESCE(read_at, $6::timestamptz) ELSE read_at END,
        failed_at = CASE WHEN $2 = 'failed' THEN $6::timestamptz ELSE failed_at END,
        -- A receipt that beats the send's own outcome ends the retries too: the error of an earlier
        -- attempt goes, as when the send's answer moves the message to sent (lastErrorCode stays).
        error = CASE WHEN $7::text IS NULL AND status IN ('pending', 'queued') THEN NULL ELSE COALESCE($7::text::jsonb, error) END,
        last_error_code = COALESCE($7::text::jsonb ->> 'code', last_error_code),
        provider_message_id = COALESCE(provider_message_id, $8),
        attempt_count = CASE WHEN status IN ('pending', 'queued') THEN attempt_count + 1 ELSE attempt_count END,
        last_attempt_at = CASE WHEN status IN ('pending', 'queued') THEN COALESCE(last_attempt_at, now()) ELSE last_attempt_at END,
        due_at = NULL, locked_by = NULL, locked_until = NULL
      WHERE id = $1`,
    [
      id,
      steps[steps.length - 1],
      steps.includes('sent'),
      steps.includes('delivered'),
      steps.includes('read'),
      r.occurredAt.toISOString(),
      error ? JSON.stringify(error) : null,
      r.providerMessageId,
    ],
  );
}

/** Re-applies parked receipts whose message is now known (after its send was saved). */
export async function applyParkedReceipts(
  tx: Queryable,
  providerMessageIds: string[] | null,
  limit = 500,
): Promise<number> {
  const parked = await tx.query<{
    id: string;
    chat_account_id: string;
    provider_message_id: string;
    status: string;
    occurred_at: Date;
    error: StatusReceipt['error'];
  }>(
    `DELETE FROM pending_receipts p WHERE p.id IN (
        SELECT p2.id FROM pending_receipts p2 JOIN messages m ON m.provider_message_id = p2.provider_message_id AND m.chat_account_id = p2.chat_account_id
         WHERE $1::text[] IS NULL OR p2.provider_message_id = ANY($1::text[]) ORDER BY p2.id LIMIT $2)
      RETURNING p.id, p.chat_account_id, p.provider_message_id, p.status, p.occurred_at, p.error`,
    [providerMessageIds, limit],
  );
  parked.sort((a, b) => Number(a.id) - Number(b.id));
  for (const p of parked) {
    await applyReceipt(tx, p.chat_account_id, {
      phoneNumberId: '',
      providerMessageId: p.provider_message_id,
      status: p.status as StatusReceipt['status'],
      occurredAt: p.occurred_at,
      messageId: null,
      error: p.error,
    });
  }
  return parked.length;
}
