// Reads of the portal's overview and broadcast pages (decision 0049): messages by the status the
// portal shows (cancelled apart from failed) per UTC day, each account's figures over the same
// days, and what a broadcast sends. Every query starts from the customer id.
import type { Db } from '../db/db.js';
import { CANCELLED_SQL, MESSAGE_STATUSES, SEND_ERROR_CODES } from '../shared/vocab.js';

/** The statuses the portal shows: the API's, with `cancelled` apart from `failed` (decision 0027). */
export const SHOWN_STATUSES = [...MESSAGE_STATUSES, 'cancelled'] as const;
export type ShownStatus = (typeof SHOWN_STATUSES)[number];

const CANCELLED = CANCELLED_SQL;
const SHOWN = `CASE WHEN ${CANCELLED} THEN 'cancelled' ELSE status END`;

/** One account's messages over the period: what left, what failed (cancelled apart), what its suppression list stopped. */
export type AccountFigures = {
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  suppressed: number;
  cancelled: number;
};

const zeroCounts = () => Object.fromEntries(SHOWN_STATUSES.map((s) => [s, 0])) as Record<ShownStatus, number>;

export function createOverviewQueries(db: Db) {
  return {
    /**
     * Messages created per UTC day over the last `days` days (sandbox included) by their shown
     * status now, and the first day's start (the period the overview's links carry).
     */
    async shownStatusByDay(customerId: string, days = 14, now = new Date()) {
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
      const rows = await db.query<{ day: string; status: ShownStatus; n: number }>(
        // Grouped by the date, formatted after: to_char on every row was most of the query's time.
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, status, n FROM (
           SELECT (created_at AT TIME ZONE 'UTC')::date AS day, ${SHOWN} AS status, count(*)::int AS n
             FROM messages WHERE customer_id = $1 AND created_at >= $2::timestamptz GROUP BY 1, 2) per_day`,
        [customerId, since.toISOString()],
      );
      const byDay = Array.from({ length: days }, (_, i) => ({
        day: new Date(since.getTime() + i * 86400_000).toISOString().slice(0, 10),
        counts: zeroCounts(),
      }));
      const index = new Map(byDay.map((d) => [d.day, d]));
      for (const r of rows) {
        const d = index.get(r.day);
        if (d && r.status in d.counts) d.counts[r.status] += Number(r.n);
      }
      return { since, byDay };
    },

    /** Each account's figures for messages created since `since` (accounts without any are absent). */
    async accountFigures(customerId: string, since: Date): Promise<Map<string, AccountFigures>> {
      const rows = await db.query<{ chat_account_id: string } & AccountFigures>(
        `SELECT chat_account_id,
                count(*) FILTER (WHERE status = 'sent')::int AS sent,
                count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                count(*) FILTER (WHERE status = 'read')::int AS read,
                count(*) FILTER (WHERE status = 'failed' AND NOT (${CANCELLED}))::int AS failed,
                count(*) FILTER (WHERE status = 'failed' AND last_error_code = $3)::int AS suppressed,
                count(*) FILTER (WHERE ${CANCELLED})::int AS cancelled
           FROM messages WHERE customer_id = $1 AND created_at >= $2::timestamptz GROUP BY chat_account_id`,
        [customerId, since.toISOString(), SEND_ERROR_CODES.RECIPIENT_OPTED_OUT],
      );
      return new Map(
        rows.map((r) => [
          r.chat_account_id,
          {
            sent: Number(r.sent),
            delivered: Number(r.delivered),
            read: Number(r.read),
            failed: Number(r.failed),
            suppressed: Number(r.suppressed),
            cancelled: Number(r.cancelled),
          },
        ]),
      );
    },

    /**
     * What a broadcast sends (its shared content, before any recipient's own values). A broadcast
     * created before the record kept it (migration 033): its first message's content.
     */
    async broadcastContent(customerId: string, broadcastId: string): Promise<unknown> {
      const rows = await db.query<{ content: unknown }>(
        `SELECT COALESCE(b.content, (SELECT m.content FROM messages m
                                      WHERE m.customer_id = b.customer_id AND m.broadcast_id = b.id
                                      ORDER BY m.created_at, m.id LIMIT 1)) AS content
           FROM broadcasts b WHERE b.customer_id = $1 AND b.id = $2`,
        [customerId, broadcastId],
      );
      return rows[0]?.content ?? null;
    },

    broadcastValues: (customerId: string, broadcastId: string) => broadcastValues(db, customerId, broadcastId),
  };
}

/**
 * The template values a broadcast's recipients carry, by place (`header` or `body`, 1-based):
 * how many messages have one, how many distinct values, and one of them. For the broadcast
 * page's summary of values that are not in the shared content (the portal's form fills a value
 * set for everyone into each row's own when another value comes from the rows).
 */
async function broadcastValues(
  db: Db,
  customerId: string,
  broadcastId: string,
): Promise<{ part: 'header' | 'body'; place: number; messages: number; distinct: number; value: string }[]> {
  const rows = await db.query<{
    part: 'header' | 'body';
    place: number;
    messages: number;
    distinct: number;
    value: string;
  }>(
    `SELECT v.part, v.place::int AS place, count(*)::int AS messages, count(DISTINCT v.value)::int AS distinct,
            min(v.value) AS value
       FROM messages m
       CROSS JOIN LATERAL (
         SELECT 'body' AS part, b.place, b.value
           FROM jsonb_array_elements_text(m.content->'template'->'components'->'body') WITH ORDINALITY AS b(value, place)
          WHERE jsonb_typeof(m.content->'template'->'components'->'body') = 'array'
         UNION ALL
         SELECT 'header', h.place, h.value
           FROM jsonb_array_elements_text(m.content->'template'->'components'->'header') WITH ORDINALITY AS h(value, place)
          WHERE jsonb_typeof(m.content->'template'->'components'->'header') = 'array'
       ) v
      WHERE m.customer_id = $1 AND m.broadcast_id = $2
      GROUP BY v.part, v.place ORDER BY v.part DESC, v.place`,
    [customerId, broadcastId],
  );
  return rows.map((r) => ({
    ...r,
    place: Number(r.place),
    messages: Number(r.messages),
    distinct: Number(r.distinct),
  }));
}
