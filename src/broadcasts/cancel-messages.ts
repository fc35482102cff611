// Failing the messages of a cancelled broadcast that have not left: the normal transitions (with
// their message.status events in the outbox), and the quota of those never tried given back when
// it was charged to the current month (a message tried once may have reached the provider; a
// past month's counter is history and stays as it was).
import type { Queryable } from '../db/db.js';
import { applyTransitions } from '../lifecycle/apply-transitions.js';
import * as transition from '../lifecycle/transitions.js';
import { quotaMonth } from '../plans/plans.js';
import type { MessageStatus } from '../shared/vocab.js';

/**
 * Locks the customer's quota row of this month before anything else of a cancel: inserts lock it
 * first too, so cancels and sends take their locks in one order.
 */
export async function lockQuotaForRefund(
  tx: Queryable,
  broadcast: { customerId: string },
  now = new Date(),
): Promise<void> {
  await tx.query('SELECT 1 FROM quota_usage WHERE customer_id = $1 AND month = $2::date FOR UPDATE', [
    broadcast.customerId,
    quotaMonth(now).month,
  ]);
}

/**
 * Fails `messages` of one broadcast, which the caller holds under the lease `holder` (the cancel
 * request's own, or a worker's that claimed them after the cancel), after `lockQuotaForRefund`.
 * Returns how many were failed.
 */
export async function failCancelledMessages(
  tx: Queryable,
  holder: string,
  broadcast: { customerId: string; createdAt: Date },
  messages: { id: string; status: MessageStatus; attemptCount: number }[],
  now = new Date(),
): Promise<number> {
  if (messages.length === 0) return 0;
  const failed = (
    await applyTransitions(
      tx,
      holder,
      messages.map((m) => transition.cancelled(m, now)),
    )
  ).length;
  await refundUnsentQuota(tx, broadcast, Math.min(failed, messages.filter((m) => m.attemptCount === 0).length), now);
  return failed;
}

/**
 * The one way quota is given back: `count` messages charged at `charged.createdAt` that failed
 * without reaching the provider, after `lockQuotaForRefund`. Only the current month's counter
 * changes (a past month's is history).
 */
export async function refundUnsentQuota(
  tx: Queryable,
  charged: { customerId: string; createdAt: Date },
  count: number,
  now = new Date(),
): Promise<void> {
  const { month } = quotaMonth(now);
  if (count > 0 && quotaMonth(charged.createdAt).month === month) {
    await tx.query('UPDATE quota_usage SET used = greatest(0, used - $3) WHERE customer_id = $1 AND month = $2::date', [
      charged.customerId,
      month,
      count,
    ]);
  }
}

/** The cancelled ones among these broadcasts (for a worker that claimed their messages). */
export async function findCancelled(
  q: Queryable,
  broadcastIds: string[],
): Promise<Map<string, { customerId: string; createdAt: Date }>> {
  if (broadcastIds.length === 0) return new Map();
  const rows = await q.query<{ id: string; customer_id: string; created_at: Date }>(
    'SELECT id, customer_id, created_at FROM broadcasts WHERE id = ANY($1::uuid[]) AND cancelled_at IS NOT NULL',
    [broadcastIds],
  );
  return new Map(rows.map((r) => [r.id, { customerId: r.customer_id, createdAt: r.created_at }]));
}
