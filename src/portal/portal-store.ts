// Reads only the portal shows (the overview's and broadcast page's in overview-store.ts): a message's metadata, webhook delivery health. Every query starts from the customer id.
import type { Db } from '../db/db.js';
import { messageHistory } from './message-history.js';
import { createOverviewQueries } from './overview-store.js';

export type PortalQueries = ReturnType<typeof createPortalQueries>;

export function createPortalQueries(db: Db) {
  return {
    ...createOverviewQueries(db),
    /** What the API's Message does not carry: the metadata and the content sent. */
    async messageExtras(customerId: string, messageId: string) {
      const rows = await db.query<{ metadata: unknown; content: unknown }>(
        'SELECT metadata, content FROM messages WHERE customer_id = $1 AND id = $2',
        [customerId, messageId],
      );
      return rows[0] ?? null;
    },

    /** A message's retried attempts, status events and their webhook deliveries (decision 0048). */
    messageHistory: (customerId: string, messageId: string) => messageHistory(db, customerId, messageId),

    /** Per endpoint: deliveries of the last 7 days and how many succeeded. */
    async webhookHealth(customerId: string) {
      const rows = await db.query<{ endpoint_id: string; total: number; ok: number; failed: number }>(
        `SELECT endpoint_id, count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS ok,
                count(*) FILTER (WHERE status = 'failed')::int AS failed
           FROM webhook_deliveries WHERE customer_id = $1 AND created_at > now() - interval '7 days'
          GROUP BY endpoint_id`,
        [customerId],
      );
      return new Map(
        rows.map((r) => [r.endpoint_id, { total: Number(r.total), ok: Number(r.ok), failed: Number(r.failed) }]),
      );
    },
  };
}
