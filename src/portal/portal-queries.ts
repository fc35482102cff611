// Reads only the portal shows: usage by day, messages by status, a message's metadata, webhook
// delivery health. Every query starts from the customer id.
import type { Db } from '../db/db.js';
import { quotaMonth } from '../plans/plans.js';
import { MESSAGE_STATUSES, type MessageStatus } from '../shared/vocab.js';

export type DayCount = { day: string; n: number };

export type PortalQueries = ReturnType<typeof createPortalQueries>;

export function createPortalQueries(db: Db) {
  return {
    /**
     * The overview's numbers from one pass over the customer's recent messages: this month's quota
     * use (the counter sends charge), live messages per UTC day of the month (the chart), and
     * messages per day and status over the last `days` days (sandbox included).
     */
    async overview(customerId: string, days = 14, now = new Date()) {
      const { month, resetsAt } = quotaMonth(now);
      const monthStart = new Date(`${month}T00:00:00Z`);
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
      const from = since < monthStart ? since : monthStart;
      const [used, rows] = await Promise.all([
        db.query<{ used: number }>('SELECT used FROM quota_usage WHERE customer_id = $1 AND month = $2', [
          customerId,
          month,
        ]),
        db.query<{ day: string; status: MessageStatus; sandbox: boolean; n: number }>(
          `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, status, sandbox, count(*)::int AS n
             FROM messages WHERE customer_id = $1 AND created_at >= $2::timestamptz GROUP BY 1, 2, 3`,
          [customerId, from.toISOString()],
        ),
      ]);
      const perDay = new Map<string, number>();
      const byDay: { day: string; counts: Record<MessageStatus, number> }[] = [];
      for (let i = 0; i < days; i++) {
        const day = new Date(since.getTime() + i * 86400_000).toISOString().slice(0, 10);
        byDay.push({
          day,
          counts: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>,
        });
      }
      for (const r of rows) {
        const n = Number(r.n);
        if (!r.sandbox && r.day >= month) perDay.set(r.day, (perDay.get(r.day) ?? 0) + n);
        const d = byDay.find((o) => o.day === r.day);
        if (d) d.counts[r.status] += n;
      }
      return {
        usage: {
          month,
          resetsAt,
          used: Number(used[0]?.used ?? 0),
          days: [...perDay].sort().map(([day, n]) => ({ day, n })),
        },
        byDay,
      };
    },

    /** What the API's Message does not carry: the metadata and the content sent. */
    async messageExtras(customerId: string, messageId: string) {
      const rows = await db.query<{ metadata: unknown; content: unknown }>(
        'SELECT metadata, content FROM messages WHERE customer_id = $1 AND id = $2',
        [customerId, messageId],
      );
      return rows[0] ?? null;
    },

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
