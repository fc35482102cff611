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
