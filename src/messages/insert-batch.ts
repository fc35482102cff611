// One transaction for a whole batch of accepted sends: quota rows locked, messages inserted
// idempotently, quota charged for what was really created, workers woken. A constant number of
// statements whatever the batch size.
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { USAGE_CONFLICT, USAGE_STRIPE } from '../lifecycle/usage-rollup.js';
import { quotaMonth } from '../plans/plans.js';
import { queueQuotaAlerts, thresholdAlertsSql } from '../usage/quota-alerts.js';
import type { AcceptedSend } from './accept-send.js';

/** One accepted send: the intake's row (accept-send.ts) and its recipient. */
export type NewMessage = AcceptedSend & { recipient: string; sandbox: boolean; requireReplyWindow?: boolean };

export type Ack = { messageId: string; externalId: string; status: string; queued: boolean };

export type InsertOutcome =
  | { kind: 'created'; ack: Ack }
  | { kind: 'repeat'; ack: Ack }
  | { kind: 'conflict' }
  | { kind: 'quota_exceeded'; limit: number; used: number; resetsAt: string }
  | { kind: 'revoked' }
  /** The uploaded file it uses was deleted (or is not the customer's) by the time of the insert. */
  | { kind: 'media_gone' }
  /** The database refused this request's row (the batch was retried row by row to find it). */
  | { kind: 'error'; error: unknown };

export const MESSAGES_READY = 'chatgate_messages_ready';

/**
 * One statement: lock (creating if missing) this month's quota rows of the charged customers, in
 * customer id order so batches never deadlock, and read their usage; insert the messages
 * idempotently, re-checking each key's revocation. The usage read is the latest committed one and
 * stays ours until commit, so admitting by it cannot overshoot.
 */
const LOCK_AND_INSERT_SQL = `
  WITH quota AS (
    INSERT INTO quota_usage AS q (customer_id, month)
    SELECT c, $15::date FROM unnest($16::uuid[]) AS c ORDER BY c
    ON CONFLICT (customer_id, month) DO UPDATE SET used = q.used
    RETURNING customer_id, used),
  -- The uploads the messages use, locked so they cannot be deleted before this commits (a deleted
  -- one leaves its message out).
  media AS (
    SELECT id, customer_id FROM media_files
     WHERE id = ANY($17::uuid[]) AND (used_at IS NOT NULL OR expires_at > now()) ORDER BY id FOR UPDATE),
  inserted AS (
    INSERT INTO messages (id, customer_id, chat_account_id, api_key_id, external_id, payload_hash, recipient, channel,
                          content, metadata, sandbox, status, max_attempts, created_at, expires_at, due_at, media_id,
                          scheduled_at, require_reply_window)
    SELECT t.id, t.customer_id, t.chat_account_id, t.api_key_id, t.external_id, t.payload_hash, t.recipient, t.channel,
           t.content::jsonb, t.metadata::jsonb, t.sandbox, 'pending', t.max_attempts, t.created_at, t.expires_at,
           COALESCE(t.scheduled_at, t.created_at), t.media_id, t.scheduled_at, t.require_reply_window
      FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[],
                  $9::text[], $10::text[], $11::boolean[], $12::int[], $13::timestamptz[], $14::timestamptz[], $17::uuid[],
                  $18::timestamptz[], $19::boolean[])
           AS t(id, customer_id, chat_account_id, api_key_id, external_id, payload_hash, recipient, channel,
                content, metadata, sandbox, max_attempts, created_at, expires_at, media_id, scheduled_at, require_reply_window)
     WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = t.api_key_id AND k.revoked_at IS NULL)
       AND (t.media_id IS NULL OR EXISTS (SELECT 1 FROM media f WHERE f.id = t.media_id AND f.customer_id = t.customer_id))
    ON CONFLICT (customer_id, external_id) DO NOTHING
    RETURNING id)
  SELECT 'q' AS kind, customer_id::text AS id, used FROM quota
  UNION ALL
  SELECT 'm', id::text, NULL FROM inserted
  UNION ALL
  SELECT 'f', id::text || '/' || customer_id::text, NULL FROM media`;

const columns = (items: NewMessage[]) => [
  items.map((m) => m.id),
  items.map((m) => m.customerId),
  items.map((m) => m.chatAccountId),
  items.map((m) => m.apiKeyId),
  items.map((m) => m.externalId),
  items.map((m) => m.payloadHash),
  items.map((m) => m.recipient),
  items.map((m) => m.channel),
  items.map((m) => m.contentJson),
  items.map((m) => m.metadataJson),
  items.map((m) => m.sandbox),
  items.map((m) => m.maxAttempts),
  items.map((m) => m.createdAt.toISOString()),
  items.map((m) => m.expiresAt.toISOString()),
];

async function insertOnce(tx: Queryable, items: NewMessage[], now: Date): Promise<InsertOutcome[]> {
  const { month, resetsAt } = quotaMonth(now);
  const charged = [...new Set(items.filter((m) => m.quotaLimit !== null).map((m) => m.customerId))].sort();
  const rows = await tx.query<{ kind: 'q' | 'm' | 'f'; id: string; used: number | null }>(LOCK_AND_INSERT_SQL, [
    ...columns(items),
    month,
    charged,
    items.map((m) => m.mediaId),
    items.map((m) => m.scheduledAt?.toISOString() ?? null),
    items.map((m) => m.requireReplyWindow === true),
  ]);
  const used = new Map(rows.filter((r) => r.kind === 'q').map((r) => [r.id, Number(r.used)]));
  const inserted = new Set(rows.filter((r) => r.kind === 'm').map((r) => r.id));
  const mediaFound = new Set(rows.filter((r) => r.kind === 'f').map((r) => r.id));

  // Admit what was created in arrival order until each customer's quota is full; undo the rest.
  const outcomes: (InsertOutcome | null)[] = items.map(() => null);
  const excess: string[] = [];
  const admitted = new Map<string, number>();
  const limits = new Map<string, number>();
  /** Admitted per customer/account: the day's usage rollup (sandbox sends are never charged). */
  const perAccount = new Map<string, number>();
  items.forEach((m, i) => {
    if (!inserted.has(m.id)) return;
    if (m.quotaLimit !== null) {
      const soFar = (used.get(m.customerId) ?? 0) + (admitted.get(m.customerId) ?? 0);
      if (soFar >= m.quotaLimit) {
        excess.push(m.id);
        outcomes[i] = { kind: 'quota_exceeded', limit: m.quotaLimit, used: soFar, resetsAt };
        return;
      }
      admitted.set(m.customerId, (admitted.get(m.customerId) ?? 0) + 1);
      limits.set(m.customerId, m.quotaLimit);
      const k = `${m.customerId}/${m.chatAccountId}`;
      perAccount.set(k, (perAccount.get(k) ?? 0) + 1);
    }
    outcomes[i] = {
      kind: 'created',
      ack: { messageId: m.id, externalId: m.externalId, status: 'pending', queued: true },
    };
  });

  // Requests that inserted nothing: an existing message with that externalId, or a revoked key.
  const others = items.filter((_, i) => outcomes[i] === null);
  if (others.length > 0) {
    const existing = await tx.query<{
      id: string;
      customer_id: string;
      external_id: string;
      payload_hash: string;
      status: string;
    }>(
      `SELECT m.id, m.customer_id, m.external_id, m.payload_hash, m.status FROM messages m
         JOIN unnest($1::uuid[], $2::text[]) AS k(customer_id, external_id)
           ON m.customer_id = k.customer_id AND m.external_id = k.external_id`,
      [others.map((m) => m.customerId), others.map((m) => m.externalId)],
    );
    const byKey = new Map(existing.map((r) => [`${r.customer_id}\u0000${r.external_id}`, r]));
    const excessSet = new Set(excess);
    items.forEach((m, i) => {
      if (outcomes[i] !== null) return;
      const row = byKey.get(`${m.customerId}\u0000${m.externalId}`);
      if (row === undefined)
        outcomes[i] =
          m.mediaId !== null && !mediaFound.has(`${m.mediaId}/${m.customerId}`)
            ? { kind: 'media_gone' }
            : { kind: 'revoked' };
      else if (excessSet.has(row.id)) {
        // Its twin in this batch was refused for quota (and is undone): so is it.
        outcomes[i] = outcomes[items.findIndex((x) => x.id === row.id)] ?? { kind: 'conflict' };
      } else if (row.payload_hash !== m.payloadHash) outcomes[i] = { kind: 'conflict' };
      else
        outcomes[i] = {
          kind: 'repeat',
          ack: { messageId: row.id, externalId: row.external_id, status: row.status, queued: true },
        };
    });
  }

  if (excess.length > 0) await tx.query('DELETE FROM messages WHERE id = ANY($1::uuid[])', [excess]);
  if (admitted.size > 0 || inserted.size > excess.length)
    await chargeAndWake(tx, items, outcomes, now, { admitted, limits, perAccount });
  return outcomes as InsertOutcome[];
}

/**
 * One statement: charge what was admitted and count it in the day's usage rollup, record the
 * quota thresholds it reached (quota-alerts.ts), mark the uploads now used (kept until their
 * messages are done) and wake the workers. Rollup rows go in key order, as the lifecycle's do.
 */
async function chargeAndWake(
  tx: Queryable,
  items: NewMessage[],
  outcomes: (InsertOutcome | null)[],
  now: Date,
  charge: { admitted: Map<string, number>; limits: Map<string, number>; perAccount: Map<string, number> },
): Promise<void> {
  const { month, resetsAt } = quotaMonth(now);
  const created = items.filter((_, i) => outcomes[i]?.kind === 'created');
  const usedMedia = [...new Set(created.flatMap((m) => (m.mediaId !== null ? [m.mediaId] : [])))];
  const customers = [...charge.admitted.keys()];
  const rollup = [...charge.perAccount.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rows = await tx.query<{ customer_id: string; threshold: number; used: number; lim: number }>(
    `WITH charged AS (
       UPDATE quota_usage q SET used = q.used + d.n
         FROM unnest($1::uuid[], $2::int[], $3::int[]) AS d(customer_id, n, lim)
        WHERE q.customer_id = d.customer_id AND q.month = $4::date
        RETURNING q.customer_id, q.used, d.lim),
     alerts AS (${thresholdAlertsSql('charged', '$4::date')}),
     rollup AS (
       INSERT INTO usage_daily AS u (customer_id, day, chat_account_id, accepted, stripe)
       SELECT customer_id, $9::date, chat_account_id, n, ${USAGE_STRIPE} FROM unnest($7::uuid[], $8::uuid[], $10::int[]) AS r(customer_id, chat_account_id, n)
       ON CONFLICT ${USAGE_CONFLICT} DO UPDATE SET accepted = u.accepted + EXCLUDED.accepted
       RETURNING 1),
     media_used AS (
       UPDATE media_files SET used_at = now() WHERE id = ANY($11::uuid[]) AND used_at IS NULL RETURNING 1)
     SELECT a.customer_id, a.threshold, c.used, c.lim FROM alerts a JOIN charged c USING (customer_id)
     UNION ALL
     SELECT NULL, NULL, NULL, NULL FROM (SELECT pg_notify($5, '') WHERE $6::boolean) AS woken`,
    [
      customers,
      customers.map((c) => charge.admitted.get(c)!),
      customers.map((c) => charge.limits.get(c)!),
      month,
      MESSAGES_READY,
      created.length > 0,
      rollup.map(([k]) => k.slice(0, 36)),
      rollup.map(([k]) => k.slice(37)),
      now.toISOString().slice(0, 10),
      rollup.map(([, n]) => n),
      usedMedia,
    ],
  );
  const crossed = rows.filter((r) => r.customer_id !== null);
  if (crossed.length > 0)
    await queueQuotaAlerts(
      tx,
      crossed.map((r) => ({
        customerId: r.customer_id,
        threshold: Number(r.threshold),
        limit: Number(r.lim),
        used: Number(r.used),
      })),
      resetsAt,
      now,
    );
}

/** Writes one batch; a deadlock between concurrent batches (crossing unique-key waits) is retried. */
const insertWithRetry = (db: Db, items: NewMessage[], now: Date) =>
  retryTransient(() => db.transaction((tx) => insertOnce(tx, items, now)));

/**
 * Writes a batch of sends. Should the database refuse the batch, each request is tried alone, so
 * one bad row (of any customer) fails only its own request.
 */
export async function insertBatch(db: Db, items: NewMessage[], now = new Date()): Promise<InsertOutcome[]> {
  try {
    return await insertWithRetry(db, items, now);
  } catch (err) {
    if (items.length === 1) return [{ kind: 'error', error: err }];
    const outcomes: InsertOutcome[] = [];
    for (const item of items) {
      try {
        outcomes.push(...(await insertWithRetry(db, [item], now)));
      } catch (itemErr) {
        outcomes.push({ kind: 'error', error: itemErr });
      }
    }
    return outcomes;
  }
}
