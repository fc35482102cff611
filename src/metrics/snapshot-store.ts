// The scrape's reads of the database: operator-wide by design (no tenant), each bounded by a
// small table or an index, never a scan of all messages.
import type { Queryable } from '../db/db.js';
import { PLAN_LIMITS, PLANS, quotaMonth } from '../plans/plans.js';

export const QUEUE_STATES = ['pending', 'queued', 'retry_wait'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export type QueueRow = { state: QueueState; depth: number; oldestDueSeconds: number };

/**
 * Messages waiting for a worker, through the partial index messages_due (due_at IS NOT NULL):
 * the work is proportional to the queue, not to the table. pending: not claimed yet; queued:
 * claimed, and no attempt made or one in flight (an attempt counts as its send starts, decision
 * 0021: a message under a live lease is being worked on); retry_wait: waiting for another attempt
 * after a transient failure.
 * The age is how long the oldest message whose due time has passed has been waiting.
 */
export async function readQueue(db: Pick<Queryable, 'query'>): Promise<QueueRow[]> {
  const rows = await db.query<{ state: QueueState; depth: number; oldest: number | null }>(
    `SELECT CASE WHEN status = 'pending' THEN 'pending' WHEN attempt_count = 0 OR locked_until > now() THEN 'queued'
                 ELSE 'retry_wait' END AS state,
            count(*)::int AS depth,
            EXTRACT(EPOCH FROM now() - min(due_at) FILTER (WHERE due_at <= now()))::float8 AS oldest
       FROM messages WHERE due_at IS NOT NULL AND status IN ('pending', 'queued')
      GROUP BY 1`,
  );
  return rows.map((r) => ({ state: r.state, depth: Number(r.depth), oldestDueSeconds: Math.max(0, r.oldest ?? 0) }));
}

/** Chat accounts by status (a small table). */
export async function readAccountStatuses(db: Pick<Queryable, 'query'>): Promise<Map<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM chat_accounts GROUP BY status',
  );
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

/** The accounts in ERROR (at most `limit`, a bound on the series): who, whose, and the provider's code. */
export type AccountInError = { accountId: string; customerId: string; code: string };
export async function readAccountsInError(db: Pick<Queryable, 'query'>, limit: number): Promise<AccountInError[]> {
  return db.query<AccountInError>(
    `SELECT id AS "accountId", customer_id AS "customerId", COALESCE(last_error_code, '') AS code
       FROM chat_accounts WHERE status = 'ERROR' ORDER BY id LIMIT $1`,
    [limit],
  );
}

/** Active webhook endpoints whose latest attempt failed. */
export async function readFailingEndpoints(db: Pick<Queryable, 'query'>): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints
      WHERE is_active AND last_failure_at IS NOT NULL AND (last_success_at IS NULL OR last_failure_at > last_success_at)`,
  );
  return Number(rows[0]?.n ?? 0);
}

export type WebhookBacklog = { due: number; oldestDueSeconds: number };

/**
 * Webhook deliveries past their due time and not delivered yet (through the partial index
 * webhook_deliveries_due: proportional to the pending ones), and how long the oldest has waited
 * past it: the delivery workers' lag, not a receiver's failures (those wait their retry schedule,
 * not counted until due again).
 */
export async function readWebhookBacklog(db: Pick<Queryable, 'query'>): Promise<WebhookBacklog> {
  const rows = await db.query<{ n: number; oldest: number | null }>(
    `SELECT count(*)::int AS n, EXTRACT(EPOCH FROM now() - min(next_attempt_at))::float8 AS oldest
       FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now()`,
  );
  return { due: Number(rows[0]?.n ?? 0), oldestDueSeconds: Math.max(0, rows[0]?.oldest ?? 0) };
}

export type QuotaRow = { customerId: string; used: number; limit: number };

/** The `topN` customers closest to (or over) their plan's monthly limit this UTC month. */
export async function readTopQuota(db: Pick<Queryable, 'query'>, topN: number, now = new Date()): Promise<QuotaRow[]> {
  const rows = await db.query<{ customer_id: string; used: number; lim: number }>(
    `SELECT q.customer_id, q.used, l.lim
       FROM quota_usage q
       JOIN customers c ON c.id = q.customer_id
       JOIN unnest($2::text[], $3::int[]) AS l(plan, lim) ON l.plan = c.plan
      WHERE q.month = $1::date
      ORDER BY q.used::float8 / l.lim DESC, q.customer_id LIMIT $4`,
    [quotaMonth(now).month, [...PLANS], PLANS.map((p) => PLAN_LIMITS[p].messagesPerMonth), topN],
  );
  return rows.map((r) => ({ customerId: r.customer_id, used: Number(r.used), limit: Number(r.lim) }));
}
