// A plan change's retention applied to a customer's messages already written: none outlives the
// new plan's retention (the purge pass then deletes those past it; purge-messages.ts).
import type { Queryable } from '../db/db.js';

/** Clips the lifetime of the customer's messages to `retentionDays` from their creation. */
export async function clipRetention(tx: Queryable, customerId: string, retentionDays: number): Promise<void> {
  await tx.query(
    `UPDATE messages SET expires_at = created_at + make_interval(days => $2)
      WHERE customer_id = $1 AND expires_at > created_at + make_interval(days => $2)`,
    [customerId, retentionDays],
  );
}
