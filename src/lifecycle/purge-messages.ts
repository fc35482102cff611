// The end of a message past its lifetime (`ttlSeconds` clipped to plan retention): in any state,
// its record is deleted by the purge pass, with no `failed` state and no event, and its
// externalId becomes reusable (the spec's lifecycle table). A send still in flight then finds no
// row to record its outcome on, and its receipts are parked until they are dropped unmatched.
import { deleteInChunks } from '../db/chunked.js';
import type { Db } from '../db/db.js';

/** Deletes the messages whose lifetime has passed, a chunk per statement; returns how many. */
export async function purgeExpiredMessages(db: Pick<Db, 'query'>, chunk: number): Promise<number> {
  return deleteInChunks(
    db,
    `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE expires_at <= now() LIMIT $1) RETURNING id`,
    chunk,
  );
}
