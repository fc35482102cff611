// Where every message enters the lifecycle: its row written `pending` (the one list of columns a
// new message has), its customer's quota charged, the day's usage rollup counted, the quota
// thresholds it reaches recorded (quota.threshold, quota-alerts.ts), its upload marked used and
// the workers woken at commit. Sends (a group-committed batch, each admitted while its customer's
// quota lasts: messages/insert-batch.ts) and broadcasts (every recipient or none:
// broadcasts/insert-broadcast.ts) are the two callers; both admit by charge-quota.ts.
import type { Queryable } from '../db/db.js';
import { quotaMonth } from '../plans/plans.js';
import { queueQuotaAlerts, thresholdAlertsSql } from './quota-alerts.js';
import { USAGE_CONFLICT, USAGE_STRIPE } from './usage-rollup.js';

/** The NOTIFY channel that wakes the dispatchers: new messages are due. */
export const MESSAGES_READY = 'chatgate_messages_ready';

/** A new message row, as intake writes it (its status is always `pending`). */
export type NewMessageRow = {
  id: string;
  customerId: string;
  chatAccountId: string;
  /** null: sent from the portal. */
  apiKeyId: string | null;
  externalId: string;
  payloadHash: string;
  recipient: string;
  /** The business-scoped user id a send addressed (decision 0036); null or absent for a number. */
  recipientUserId?: string | null;
  channel: string;
  contentJson: string;
  metadataJson: string | null;
  sandbox: boolean;
  broadcastId: string | null;
  maxAttempts: number;
  createdAt: Date;
  expiresAt: Date;
  /** When a worker may take it: now, its `sendAt`, or a broadcast's paced offset from either. */
  dueAt: Date;
  mediaId: string | null;
  scheduledAt: Date | null;
  requireReplyWindow: boolean;
  /** The earlier message it replies or reacts to (ReplyTarget as JSON), or null (decision 0032). */
  replyTargetJson: string | null;
};

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** Column, its type in the unnest, and how a row gives it. A new message field is added here only. */
const COLUMNS: [string, string, (m: NewMessageRow) => unknown][] = [
  ['id', 'uuid', (m) => m.id],
  ['customer_id', 'uuid', (m) => m.customerId],
  ['chat_account_id', 'uuid', (m) => m.chatAccountId],
  ['api_key_id', 'uuid', (m) => m.apiKeyId],
  ['external_id', 'text', (m) => m.externalId],
  ['payload_hash', 'text', (m) => m.payloadHash],
  ['recipient', 'text', (m) => m.recipient],
  ['recipient_user_id', 'text', (m) => m.recipientUserId ?? null],
  ['channel', 'text', (m) => m.channel],
  ['content', 'text', (m) => m.contentJson],
  ['metadata', 'text', (m) => m.metadataJson],
  ['sandbox', 'boolean', (m) => m.sandbox],
  ['broadcast_id', 'uuid', (m) => m.broadcastId],
  ['max_attempts', 'int', (m) => m.maxAttempts],
  ['created_at', 'timestamptz', (m) => iso(m.createdAt)],
  ['expires_at', 'timestamptz', (m) => iso(m.expiresAt)],
  ['due_at', 'timestamptz', (m) => iso(m.dueAt)],
  ['media_id', 'uuid', (m) => m.mediaId],
  ['scheduled_at', 'timestamptz', (m) => iso(m.scheduledAt)],
  ['require_reply_window', 'boolean', (m) => m.requireReplyWindow],
  ['reply_target', 'text', (m) => m.replyTargetJson],
];
const JSON_COLUMNS = new Set(['content', 'metadata', 'reply_target']);

/**
 * The INSERT of new message rows from unnest arrays, as SQL to run alone or inside a caller's CTE:
 * its parameters start at `$first` (`params(rows)` gives them in order; `param(column)` names one
 * for the caller's own clauses). `where` may refer to the row's columns as `t.<column>`. A row
 * whose (customer, externalId) is taken is left out (ON CONFLICT DO NOTHING); RETURNING id.
 */
export function messageInsert(first: number, where = 'TRUE') {
  const names = COLUMNS.map(([c]) => c);
  const param = (column: string) => `$${first + names.indexOf(column)}`;
  const sql = `INSERT INTO messages (${names.join(', ')}, status)
    SELECT ${names.map((c) => (JSON_COLUMNS.has(c) ? `t.${c}::jsonb` : `t.${c}`)).join(', ')}, 'pending'
      FROM unnest(${COLUMNS.map(([c, type]) => `${param(c)}::${type}[]`).join(', ')}) AS t(${names.join(', ')})
     WHERE ${where}
    ON CONFLICT (customer_id, external_id) DO NOTHING
    RETURNING id`;
  return {
    sql,
    param,
    /** The statement's parameters from `$first` on, one array per column. */
    params: (rows: NewMessageRow[]) => COLUMNS.map(([, , get]) => rows.map(get)),
    next: first + COLUMNS.length,
  };
}

/** Messages a customer is charged for: `n` more this month, against its plan's `limit`. */
export type QuotaCharge = { customerId: string; n: number; limit: number };
/** Admitted messages of one account, for the day's usage rollup. */
export type AccountCount = { customerId: string; chatAccountId: string; n: number };

const byKey =
  <T>(key: (x: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

/**
 * One statement for what every intake transaction writes besides the rows: each customer's quota
 * charged with its limit in the WHERE (a customer whose charge would pass the limit is not
 * charged at all, and is missing from the answer), the day's usage rollup, the quota thresholds
 * reached (their events queued in the same transaction), the uploads marked used (kept until
 * their messages are done) and the workers woken (NOTIFY is sent at commit). Rows go in key order,
 * as the lifecycle's other writers take them. Returns the charged customers' new counters.
 */
export async function chargeAndWake(
  tx: Queryable,
  c: { charges: QuotaCharge[]; accounts: AccountCount[]; usedMedia: string[]; wake: boolean; now: Date },
): Promise<Map<string, number>> {
  const { month, resetsAt } = quotaMonth(c.now);
  const charges = [...c.charges].sort(byKey((x) => x.customerId));
  const accounts = [...c.accounts].sort(byKey((x) => `${x.customerId}/${x.chatAccountId}`));
  const rows = await tx.query<{ kind: 'c' | 'a'; customer_id: string; used: number; threshold: number | null }>(
    `WITH limits AS (SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[]) AS l(customer_id, n, lim)),
     updated AS (
       INSERT INTO quota_usage AS q (customer_id, month, used)
       SELECT customer_id, $4::date, n FROM limits WHERE n <= lim ORDER BY customer_id
       ON CONFLICT (customer_id, month) DO UPDATE SET used = q.used + EXCLUDED.used
        WHERE q.used + EXCLUDED.used <= (SELECT lim FROM limits l WHERE l.customer_id = q.customer_id)
       RETURNING customer_id, used),
     charged AS (SELECT u.customer_id, u.used, l.lim FROM updated u JOIN limits l USING (customer_id)),
     alerts AS (${thresholdAlertsSql('charged', '$4::date')}),
     rollup AS (
       INSERT INTO usage_daily AS u (customer_id, day, chat_account_id, accepted, stripe)
       SELECT customer_id, $5::date, chat_account_id, n, ${USAGE_STRIPE}
         FROM unnest($6::uuid[], $7::uuid[], $8::int[]) AS r(customer_id, chat_account_id, n)
       ON CONFLICT ${USAGE_CONFLICT} DO UPDATE SET accepted = u.accepted + EXCLUDED.accepted
       RETURNING 1),
     media_used AS (
       UPDATE media_files SET used_at = now() WHERE id = ANY($9::uuid[]) AND used_at IS NULL RETURNING 1)
     SELECT 'c' AS kind, customer_id, used, NULL::int AS threshold FROM charged
     UNION ALL
     SELECT 'a', a.customer_id, c.used, a.threshold FROM alerts a JOIN charged c USING (customer_id)
     UNION ALL
     SELECT NULL, NULL, NULL, NULL FROM (SELECT pg_notify($10, '') WHERE $11::boolean) AS woken`,
    [
      charges.map((x) => x.customerId),
      charges.map((x) => x.n),
      charges.map((x) => x.limit),
      month,
      c.now.toISOString().slice(0, 10),
      accounts.map((x) => x.customerId),
      accounts.map((x) => x.chatAccountId),
      accounts.map((x) => x.n),
      c.usedMedia,
      MESSAGES_READY,
      c.wake,
    ],
  );
  const charged = new Map(rows.filter((r) => r.kind === 'c').map((r) => [r.customer_id, Number(r.used)]));
  const limits = new Map(charges.map((x) => [x.customerId, x.limit]));
  const crossed = rows.filter((r) => r.kind === 'a');
  if (crossed.length > 0)
    await queueQuotaAlerts(
      tx,
      crossed.map((r) => ({
        customerId: r.customer_id,
        threshold: Number(r.threshold),
        limit: limits.get(r.customer_id)!,
        used: Number(r.used),
      })),
      resetsAt,
      c.now,
    );
  return charged;
}
