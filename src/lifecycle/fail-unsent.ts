// Failing messages that never left (a cancelled message, a cancelled broadcast's messages, and
// whatever else stops a message before its send): the usual failed transition, with its
// message.status event in the outbox and its upload released, and the quota given back for
// those never tried. A message tried once may have reached the provider, so it keeps its charge;
// so does one charged to a past month (that counter is history). Sandbox messages were never
// charged. A message is failed only once (the transition needs it pending or queued and held by
// `holder`), so its quota is given back at most once.
import type { Queryable } from '../db/db.js';
import { quotaMonth } from '../plans/plans.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';
import { type AppliedChange, applyTransitions } from './apply-transitions.js';
import type { MessageState, SendErrorDetail } from './transitions.js';
import * as transition from './transitions.js';

export const MESSAGE_CANCELLED_ERROR: SendErrorDetail = {
  code: SEND_ERROR_CODES.CANCELLED,
  message: 'The message was cancelled before it was sent',
};

/**
 * Locks the customers' quota rows of this month before anything else of a cancel: inserts lock
 * them first too (and in customer id order), so cancels and sends take their locks in one order.
 */
export async function lockQuotaForRefund(tx: Queryable, customerIds: string[], now = new Date()): Promise<void> {
  await tx.query(
    `SELECT 1 FROM quota_usage WHERE customer_id = ANY($1::uuid[]) AND month = $2::date ORDER BY customer_id FOR UPDATE`,
    [[...new Set(customerIds)].sort(), quotaMonth(now).month],
  );
}

/**
 * Fails `messages`, which the caller holds under the lease `holder` (a cancel's own hold, or a
 * worker's claim), with `error`, after lockQuotaForRefund for their customers. Returns the
 * messages it changed (one held by someone else, or no longer pending or queued, is left alone).
 */
export async function failUnsent(
  tx: Queryable,
  holder: string,
  messages: MessageState[],
  error: SendErrorDetail,
  now = new Date(),
): Promise<AppliedChange[]> {
  if (messages.length === 0) return [];
  const changes = await applyTransitions(
    tx,
    holder,
    messages.map((m) => transition.failed(m, now, error, false)),
  );
  if (changes.length === 0) return changes;
  const { month, resetsAt } = quotaMonth(now);
  await tx.query(
    `UPDATE quota_usage q SET used = greatest(0, q.used - r.n)
       FROM (SELECT customer_id, count(*)::int AS n FROM messages
              WHERE id = ANY($1::uuid[]) AND attempt_count = 0 AND NOT sandbox
                AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
              GROUP BY customer_id) r
      WHERE q.customer_id = r.customer_id AND q.month = $4::date`,
    [changes.map((c) => c.messageId), `${month}T00:00:00Z`, resetsAt, month],
  );
  return changes;
}
