// When uploaded files go (the spec's media file lifecycle):
// - unused: expires `MEDIA_UNUSED_TTL_SECONDS` (1 hour) after upload; invisible to sends from
//   then on, its row and bytes deleted by the purger;
// - used: kept while any message using it is pending or queued (retries included), deleted as
//   soon as the last of them leaves the queue (sent, or failed for good), or when the purger finds
//   none left (their lifetime elapsed and they were purged).
//
// Deleting races with a send that is being inserted: the insert locks the file's row (see
// insert-batch.ts), and deletion locks the rows first, then deletes in a second statement, whose
// fresh snapshot sees a message committed while it waited.
//
// This module is the one writer of media_files (ARCHITECTURE.md, "Who writes what"; decision
// 0069): the upload's row, its provider ids, its use and its deletion.
import type { Db, Queryable } from '../db/db.js';

const NONE_WAITING = `NOT EXISTS (SELECT 1 FROM messages m WHERE m.media_id = f.id AND m.status IN ('pending', 'queued'))`;

async function lockThenDelete(
  tx: Pick<Queryable, 'query'>,
  candidatesSql: string,
  params: unknown[],
  condition: string,
): Promise<number> {
  const locked = await tx.query<{ id: string }>(candidatesSql, params);
  if (locked.length === 0) return 0;
  const rows = await tx.query(
    `DELETE FROM media_files f WHERE f.id = ANY($1::uuid[]) AND ${condition} RETURNING f.id`,
    [locked.map((r) => r.id)],
  );
  return rows.length;
}

/**
 * Deletes those of these used files that no pending or queued message needs any more. The rows
 * are locked whatever their messages: two transactions finishing the last messages of one file
 * then take turns, and the second one's check sees the first one's messages done (a check made
 * while locking would use the snapshot from before the wait, and both would keep the file).
 */
export function releaseMedia(tx: Pick<Queryable, 'query'>, mediaIds: string[]): Promise<number> {
  return lockThenDelete(
    tx,
    `SELECT f.id FROM media_files f WHERE f.id = ANY($1::uuid[]) ORDER BY f.id FOR UPDATE`,
    [mediaIds],
    `f.used_at IS NOT NULL AND ${NONE_WAITING}`,
  );
}

/** The purger's pass: expired unused files, and used ones nothing waits for, in chunks. */
export async function purgeMedia(db: Db, chunk: number): Promise<number> {
  const condition = `((f.used_at IS NULL AND f.expires_at <= now()) OR (f.used_at IS NOT NULL AND ${NONE_WAITING}))`;
  let total = 0;
  for (;;) {
    const n = await db.transaction((tx) =>
      lockThenDelete(
        tx,
        `SELECT f.id FROM media_files f WHERE ${condition} ORDER BY f.id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [chunk],
        condition,
      ),
    );
    total += n;
    if (n < chunk) return total;
  }
}

/** Records a new upload's row (in the transaction that stores its bytes); its expiry. */
export async function insertMediaFile(
  tx: Pick<Queryable, 'query'>,
  params: [string, string, string, string, number, string, number],
): Promise<{ expires_at: Date }> {
  const [r] = await tx.query<{ expires_at: Date }>(
    `INSERT INTO media_files (id, customer_id, filename, mimetype, size_bytes, sha256, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING expires_at`,
    params,
  );
  return r!;
}

/** Remembers the provider's media id of the file for one phone number. */
export async function recordProviderMediaId(
  db: Pick<Queryable, 'query'>,
  mediaId: string,
  phoneNumberId: string,
  providerMediaId: string,
): Promise<void> {
  await db.query(
    `UPDATE media_files SET provider_ids = provider_ids || jsonb_build_object($2::text, $3::text) WHERE id = $1`,
    [mediaId, phoneNumberId, providerMediaId],
  );
}

/**
 * Locks a broadcast's upload and marks it used; false when the customer has no such file still
 * usable (unused and expired, or deleted).
 */
export async function lockMediaForBroadcast(
  tx: Pick<Queryable, 'query'>,
  mediaId: string,
  customerId: string,
): Promise<boolean> {
  const media = await tx.query(
    'UPDATE media_files SET used_at = COALESCE(used_at, now()) WHERE id = $1 AND customer_id = $2 AND (used_at IS NOT NULL OR expires_at > now()) RETURNING id',
    [mediaId, customerId],
  );
  return media.length > 0;
}
