// Applying worker decisions to claimed messages in one statement, with their message.status
// events in the same transaction. A row whose lease this worker lost is left alone (no event).
import type { Logger } from 'pino';

import type { Queryable } from '../db/db.js';
import { isUnconfirmedCode } from '../provider/error-map.js';
import type { MessageStatus } from '../shared/vocab.js';
import { releaseMedia } from './media-lifecycle.js';
import { recordRetries, type Retry } from './message-retries.js';
import { type EventMessage, messageStatusEvent } from './message-status-event.js';
import { attemptsAdded, type SendErrorDetail, type Transition } from './transitions.js';
import { writeEvents } from './write-events.js';

const EMITTING: readonly MessageStatus[] = ['sent', 'delivered', 'read', 'failed'];
const QUEUED: readonly MessageStatus[] = ['pending', 'queued'];

/** A changed row: the message as its event names it, and the change. */
type ChangedRow = EventMessage & {
  error: SendErrorDetail | null;
  media_id: string | null;
  from_status: MessageStatus;
  to_status: MessageStatus;
  at: Date;
  attemptCount: number;
  dueAt: Date | null;
};

/** A message a transition changed: what its log line names (ids, never the recipient). */
export type AppliedChange = {
  messageId: string;
  customerId: string;
  accountId: string;
  from: MessageStatus;
  to: MessageStatus;
  errorCode: string | null;
  /** A send attempt that failed and will be tried again: its number and when the next one is due. */
  retry?: { attempt: number; at: string | null };
};

/** Told of every change a worker logs (dispatch/worker-activity.ts counts them for its summary line). */
export type ChangeTally = (changes: AppliedChange[]) => void;

/**
 * One line per changed message, after the commit that made the change: a failure at info and a
 * send to be retried at warn (an operator looks for those), every other change at debug
 * (thousands a second at full speed).
 */
export function logChanges(
  log: Pick<Logger, 'debug' | 'info' | 'warn'>,
  changes: AppliedChange[],
  action: string,
  tally?: ChangeTally,
): void {
  tally?.(changes);
  for (const c of changes) {
    if (c.to === 'failed') log.info(c, `message failed (${action})`);
    else if (c.retry) {
      const { retry, ...ids } = c;
      const fields = { ...ids, attempt: retry.attempt, retryAt: retry.at };
      // An unconfirmed send (decision 0061) is not tried again: at retryAt it fails unless a receipt came.
      if (isUnconfirmedCode(c.errorCode))
        log.warn(
          fields,
          `send unanswered, may have reached the provider: waiting for its receipt, not sent again (${action})`,
        );
      else log.warn(fields, `send failed, will retry (${action})`);
    } else log.debug(c, `message ${c.from} → ${c.to} (${action})`);
  }
}

/** Uploads whose messages have all left the queue are deleted now. */
async function releaseLeftMedia(tx: Queryable, rows: ChangedRow[]): Promise<void> {
  const done = rows.filter((r) => r.media_id !== null && !QUEUED.includes(r.to_status)).map((r) => r.media_id!);
  if (done.length > 0) await releaseMedia(tx, [...new Set(done)]);
}

/** The send attempts among the changed rows that queued their message again (decision 0048). */
function retriesOf(rows: ChangedRow[], attempted: Set<string>): Retry[] {
  return rows
    .filter((r) => attempted.has(r.id) && QUEUED.includes(r.to_status))
    .map((r) => ({
      messageId: r.id,
      attempt: r.attemptCount,
      at: new Date(r.at),
      error: r.error,
      nextAt: r.dueAt ? new Date(r.dueAt) : null,
    }));
}

export async function applyTransitions(
  tx: Queryable,
  workerId: string,
  transitions: Transition[],
): Promise<AppliedChange[]> {
  if (transitions.length === 0) return [];
  // The rows are locked first, in id order (the CTE, materialised, runs before the update): the
  // order a receipt batch takes them in too, so the two never deadlock (decision 0016).
  const rows = await tx.query<ChangedRow>(
    `WITH locked AS MATERIALIZED (
       SELECT id FROM messages WHERE id = ANY($2::uuid[]) ORDER BY id FOR UPDATE
     )
     UPDATE messages m SET
        status = t.to_status,
        sent_at = CASE WHEN t.to_status = 'sent' THEN t.at ELSE m.sent_at END,
        delivered_at = CASE WHEN t.to_status = 'delivered' THEN t.at ELSE m.delivered_at END,
        read_at = CASE WHEN t.to_status = 'read' THEN t.at ELSE m.read_at END,
        failed_at = CASE WHEN t.to_status = 'failed' THEN t.at ELSE m.failed_at END,
        provider_message_id = COALESCE(t.provider_message_id, m.provider_message_id),
        provider_media = COALESCE(t.provider_media::jsonb, m.provider_media),
        provider_route = COALESCE(t.route, m.provider_route),
        error = CASE WHEN t.to_status = 'sent' THEN NULL ELSE COALESCE(t.error::jsonb, m.error) END,
        last_error_code = COALESCE(t.error::jsonb ->> 'code', m.last_error_code),
        attempt_count = greatest(0, m.attempt_count + t.attempts),
        last_attempt_at = CASE WHEN t.attempts > 0 THEN t.at ELSE m.last_attempt_at END,
        due_at = t.due_at,
        locked_by = NULL,
        locked_until = NULL
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::timestamptz[], $9::int[], $10::text[], $11::text[])
            AS t(id, from_status, to_status, at, provider_message_id, error, due_at, attempts, provider_media, route)
      WHERE m.id = t.id AND m.id IN (SELECT id FROM locked) AND m.locked_by = $1 AND m.status = t.from_status
      RETURNING m.id, m.customer_id AS "customerId", m.external_id AS "externalId", m.channel, m.recipient, m.recipient_user_id AS "recipientUserId",
                m.chat_account_id AS "chatAccountId", m.error, m.media_id, m.sandbox, t.from_status, t.to_status, t.at,
                m.attempt_count AS "attemptCount", m.due_at AS "dueAt"`,
    [
      workerId,
      transitions.map((t) => t.id),
      transitions.map((t) => t.from),
      transitions.map((t) => t.to),
      transitions.map((t) => t.at.toISOString()),
      transitions.map((t) => t.providerMessageId ?? null),
      transitions.map((t) => (t.error ? JSON.stringify(t.error) : null)),
      transitions.map((t) => t.nextDueAt?.toISOString() ?? null),
      // An attempt counted when its send started (startAttempts) is not counted again.
      transitions.map(attemptsAdded),
      transitions.map((t) => (t.providerMedia ? JSON.stringify(t.providerMedia) : null)),
      transitions.map((t) => t.route ?? null),
    ],
  );
  await releaseLeftMedia(tx, rows);
  const steps = rows.filter((r) => EMITTING.includes(r.to_status) && r.to_status !== r.from_status);
  // A send attempt's outcome that queues the message again is a retry (whenever its attempt was counted).
  const attempted = new Set(transitions.filter((t) => t.attempted).map((t) => t.id));
  // The events (usage steps among them: usage-rollup.ts) and the retries' answers, issued together: pipelined on PostgreSQL.
  await Promise.all([
    recordRetries(tx, retriesOf(rows, attempted)),
    writeEvents(
      tx,
      steps.map((r) =>
        messageStatusEvent({ message: r, from: r.from_status, to: r.to_status, at: r.at, error: r.error }),
      ),
    ),
  ]);
  return rows.map((r) => ({
    messageId: r.id,
    customerId: r.customerId,
    accountId: r.chatAccountId,
    from: r.from_status,
    to: r.to_status,
    errorCode: r.error?.code ?? null,
    ...(attempted.has(r.id) && QUEUED.includes(r.to_status)
      ? { retry: { attempt: r.attemptCount, at: r.dueAt ? new Date(r.dueAt).toISOString() : null } }
      : {}),
  }));
}
