// quota.threshold: once per customer and UTC month for each threshold (80 and 100 % of the plan's
// limit) that the quota counter reaches. The charge's own statement inserts a quota_alerts row per
// threshold reached with ON CONFLICT DO NOTHING (see THRESHOLD_ALERTS_SQL): only the transaction
// whose row is new sends the event, in that same transaction, through the outbox. So an alert goes
// once, however many processes charge at once, and a refund that takes usage back below a
// threshold does not make it go again that month.
import type { Queryable } from '../db/db.js';
import { writeEvents } from './write-events.js';

/** Percentages of the monthly limit that raise a quota.threshold event. */
export const QUOTA_THRESHOLDS = [80, 100] as const;

/**
 * A CTE body for a charge statement: `charged` is a CTE returning the charged rows'
 * `customer_id`, new `used` and `lim` (the limit the charge was checked against); `month` the
 * month's parameter. Returns (customer_id, threshold) for each alert new this month.
 */
export const thresholdAlertsSql = (charged: string, month: string) => `
  INSERT INTO quota_alerts (customer_id, month, threshold)
  SELECT c.customer_id, ${month}, t.threshold
    FROM ${charged} c CROSS JOIN unnest(ARRAY[${QUOTA_THRESHOLDS.join(', ')}]) AS t(threshold)
   WHERE c.used::bigint * 100 >= t.threshold::bigint * c.lim
   ORDER BY 1, 3
  ON CONFLICT DO NOTHING
  RETURNING customer_id, threshold`;

/** A threshold reached by a charge: the counter after it and the limit it was checked against. */
export type CrossedThreshold = { customerId: string; threshold: number; limit: number; used: number };

/** Writes the quota.threshold events of new alerts, in the charging transaction. */
export async function queueQuotaAlerts(
  tx: Queryable,
  crossed: CrossedThreshold[],
  resetsAt: string,
  now = new Date(),
): Promise<void> {
  await writeEvents(
    tx,
    crossed.map((c) => ({
      customerId: c.customerId,
      type: 'quota.threshold',
      data: { threshold: c.threshold, limit: c.limit, used: c.used, resetsAt },
      createdAt: now,
    })),
  );
}
