// One transaction for a whole broadcast, a constant number of statements whatever its size: the
// record (idempotent on the broadcast's externalId), the quota charged for every recipient at once
// with the limit in the WHERE (all or nothing), one message row per recipient from unnest arrays,
// then the workers woken. Any refusal rolls back everything.
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { USAGE_CONFLICT, USAGE_STRIPE } from '../lifecycle/usage-rollup.js';
import type { AcceptedSend } from '../messages/accept-send.js';
import { MESSAGES_READY } from '../messages/insert-batch.js';
import { quotaMonth } from '../plans/plans.js';
import { errors } from '../shared/errors.js';
import { queueQuotaAlerts, thresholdAlertsSql } from '../usage/quota-alerts.js';

/** The message rows of a broadcast, as parallel columns (what unnest takes). */
export type BroadcastRows = {
  externalIds: string[];
  recipients: string[];
  /** A recipient's own content JSON, or null for the broadcast's shared content. */
  contents: (string | null)[];
  /** Seconds after creation (or after `sendAt`) when each message becomes due (see buildMessageRows). */
  delaysSeconds: number[];
};

/**
 * One accepted broadcast: the intake's row (accept-send.ts; its content is the shared content),
 * its name and its message rows. Never sandbox, so always a quota limit.
 */
export type NewBroadcast = AcceptedSend & { quotaLimit: number; name: string | null; rows: BroadcastRows };

/** `created`, or the id of the broadcast this request repeats. Refusals are thrown. */
export type BroadcastInsert = { created: true; id: string } | { created: false; id: string };

async function insertOnce(tx: Queryable, b: NewBroadcast): Promise<BroadcastInsert> {
  const n = b.rows.recipients.length;
  const record = await tx.query<{ id: string }>(
    `INSERT INTO broadcasts (id, customer_id, chat_account_id, api_key_id, external_id, payload_hash, recipients, created_at, expires_at, name)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
      WHERE $4::uuid IS NULL -- a portal user (their session was checked at the edge)
         OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $4 AND k.revoked_at IS NULL)
     ON CONFLICT (customer_id, external_id) DO NOTHING
     RETURNING id`,
    [
      b.id,
      b.customerId,
      b.chatAccountId,
      b.apiKeyId,
      b.externalId,
      b.payloadHash,
      n,
      b.createdAt.toISOString(),
      b.expiresAt.toISOString(),
      b.name,
    ],
  );
  if (record.length === 0) {
    const [existing] = await tx.query<{ id: string; payload_hash: string }>(
      'SELECT id, payload_hash FROM broadcasts WHERE customer_id = $1 AND external_id = $2',
      [b.customerId, b.externalId],
    );
    if (!existing) throw errors.invalidKey(); // the key was revoked: nothing was written
    if (existing.payload_hash !== b.payloadHash) throw errors.conflict();
    return { created: false, id: existing.id };
  }

  // Every recipient is charged now, or none: the limit is in the WHERE of the locked row. The same
  // statement counts them in the day's usage rollup and records the quota thresholds reached.
  const { month, resetsAt } = quotaMonth(b.createdAt);
  const charged = await tx.query<{ used: number; threshold: number | null }>(
    `WITH charged AS (
       INSERT INTO quota_usage AS q (customer_id, month, used) SELECT $1::uuid, $2::date, $3::int WHERE $3::int <= $4::int
       ON CONFLICT (customer_id, month) DO UPDATE SET used = q.used + EXCLUDED.used WHERE q.used + EXCLUDED.used <= $4::int
       RETURNING customer_id, used, $4::int AS lim),
     alerts AS (${thresholdAlertsSql('charged', '$2::date')}),
     rollup AS (
       INSERT INTO usage_daily AS u (customer_id, day, chat_account_id, accepted, stripe)
       SELECT customer_id, $5::date, $6::uuid, $3::int, ${USAGE_STRIPE} FROM charged
       ON CONFLICT ${USAGE_CONFLICT} DO UPDATE SET accepted = u.accepted + EXCLUDED.accepted
       RETURNING 1)
     SELECT c.used, a.threshold FROM charged c LEFT JOIN alerts a USING (customer_id)`,
    [b.customerId, month, n, b.quotaLimit, b.createdAt.toISOString().slice(0, 10), b.chatAccountId],
  );
  const crossed = charged.filter((r) => r.threshold !== null);
  if (crossed.length > 0)
    await queueQuotaAlerts(
      tx,
      crossed.map((r) => ({
        customerId: b.customerId,
        threshold: Number(r.threshold),
        limit: b.quotaLimit,
        used: Number(r.used),
      })),
      resetsAt,
      b.createdAt,
    );
  if (charged.length === 0) {
    const [usage] = await tx.query<{ used: number }>(
      'SELECT used FROM quota_usage WHERE customer_id = $1 AND month = $2::date',
      [b.customerId, month],
    );
    throw errors.quotaExceeded(b.quotaLimit, Number(usage?.used ?? 0), resetsAt);
  }

  // The upload is locked, so it cannot be deleted before this commits, and marked used.
  if (b.mediaId !== null) {
    const media = await tx.query(
      'UPDATE media_files SET used_at = COALESCE(used_at, now()) WHERE id = $1 AND customer_id = $2 AND (used_at IS NOT NULL OR expires_at > now()) RETURNING id',
      [b.mediaId, b.customerId],
    );
    if (media.length === 0) throw errors.invalidMedia('media_not_found');
  }

  const [inserted] = await tx.query<{ n: number }>(
    `WITH inserted AS (
       INSERT INTO messages (id, customer_id, chat_account_id, api_key_id, external_id, payload_hash, recipient, channel,
                             content, metadata, sandbox, broadcast_id, status, max_attempts, created_at, expires_at, due_at, media_id,
                             scheduled_at)
       SELECT gen_random_uuid(), $1, $2, $3, t.external_id, $4, t.recipient, $5,
              COALESCE(t.content, $6::text)::jsonb, $7::text::jsonb, false, $8, 'pending', $9, $10, $11,
              COALESCE($17::timestamptz, $10::timestamptz) + make_interval(secs => t.delay), $16::uuid, $17::timestamptz
         FROM unnest($12::text[], $13::text[], $14::text[], $15::int[]) AS t(external_id, recipient, content, delay)
       ON CONFLICT (customer_id, external_id) DO NOTHING
       RETURNING 1)
     SELECT count(*)::int AS n FROM inserted`,
    [
      b.customerId,
      b.chatAccountId,
      b.apiKeyId,
      b.payloadHash,
      b.channel,
      b.contentJson,
      b.metadataJson,
      b.id,
      b.maxAttempts,
      b.createdAt.toISOString(),
      b.expiresAt.toISOString(),
      b.rows.externalIds,
      b.rows.recipients,
      b.rows.contents,
      b.rows.delaysSeconds,
      b.mediaId,
      b.scheduledAt?.toISOString() ?? null,
    ],
  );
  if (Number(inserted?.n) !== n) {
    const taken = await tx.query<{ external_id: string }>(
      `SELECT external_id FROM messages WHERE customer_id = $1 AND external_id = ANY($2::text[]) AND broadcast_id IS DISTINCT FROM $3 LIMIT 1`,
      [b.customerId, b.rows.externalIds, b.id],
    );
    const index = taken[0] ? b.rows.externalIds.indexOf(taken[0].external_id) : -1;
    throw errors.conflict(`the message externalId of recipients.${index} is already used by another message`);
  }
  await tx.query('SELECT pg_notify($1, $2)', [MESSAGES_READY, '']);
  return { created: true, id: b.id };
}

/** Writes a broadcast; a deadlock with a concurrent send batch is retried (it rolled back). */
export const insertBroadcast = (db: Db, b: NewBroadcast): Promise<BroadcastInsert> =>
  retryTransient(() => db.transaction((tx) => insertOnce(tx, b)));
