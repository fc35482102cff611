// When uploaded files go (the spec's media file lifecycle):
// - unused: expires `MEDIA_UNUSED_TTL_SECONDS` (1 hour) after upload; invisible to sends from
//   then on, its row and bytes deleted by the purger;
// - used: kept while any message using it is pending or queued (retries included), deleted as
//   soon as the last of them leaves the queue (sent, or failed for good), or when the purger finds
//   none left (their lifetime elapsed and they were purged).
import type { Queryable } from '../db/db.js';

const NONE_WAITING = `NOT EXISTS (SELECT 1 FROM messages m WHERE m.media_id = f.id AND m.status IN ('pending', 'queued'))`;

/** Deletes those of these used files that no pending or queued message needs any more. */
export async function releaseMedia(tx: Pick<Queryable, 'query'>, mediaIds: string[]): Promise<number> {
  const rows = await tx.query(`DELETE FROM media_files f WHERE f.id = ANY($1::uuid[]) AND f.used_at IS NOT NULL AND ${NONE_WAITING} RETURNING f.id`, [mediaIds]);
  return rows.length;
}

/** The purger's statement (chunked by $1): expired unused files, and used ones nothing waits for. */
export const PURGE_MEDIA_SQL = `
  DELETE FROM media_files WHERE id IN (
    SELECT f.id FROM media_files f
     WHERE (f.used_at IS NULL AND f.expires_at <= now()) OR (f.used_at IS NOT NULL AND ${NONE_WAITING})
     LIMIT $1)
  RETURNING id`;
