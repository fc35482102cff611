// Reads only the portal shows: messages by status, a message's metadata, webhook delivery health. Every query starts from the customer id.
import type { Db } from '../db/db.js';
import { MESSAGE_STATUSES, type MessageStatus } from '../shared/vocab.js';
import { messageHistory } from './message-history.js';

export type PortalQueries = ReturnType<typeof createPortalQueries>;

export function createPortalQueries(db: Db) {
  return {
    /**
     * Messages created per UTC day over the last `days` days and their status now (sandbox
     * included): the overview's table. (Its usage chart reads GET /usage's rollup.)
     */
    async statusByDay(customerId: string, days = 14, now = new Date()) {
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
      const rows = await db.query<{ day: string; status: MessageStatus; n: number }>(
        // Grouped by the date, formatted after: to_char on every row was most of the query's time.
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, status, n FROM (
           SELECT (created_at AT TIME ZONE 'UTC')::date AS day, status, count(*)::int AS n
             FROM messages WHERE customer_id = $1 AND created_at >= $2::timestamptz GROUP BY 1, 2) per_day`,
        [customerId, since.toISOString()],
      );
      const byDay: { day: string; counts: Record<MessageStatus, number> }[] = [];
      for (let i = 0; i < days; i++) {
        const day = new Date(since.getTime() + i * 86400_000).toISOString().slice(0, 10);
        byDay.push({
          day,
          counts: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>,
        });
      }
      for (const r of rows) {
        const d = byDay.find((o) => o.day === r.day);
        if (d) d.counts[r.status] += Number(r.n);
      }
      return byDay;
    },

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
