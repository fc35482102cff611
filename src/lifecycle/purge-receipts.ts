// The purge pass's end of parked receipts (purge/purger.ts runs it): receipts never matched to a
// message in a week (sent from elsewhere, or purged) are dropped.
import { deleteInChunks } from '../db/chunked.js';
import type { Db } from '../db/db.js';

/** Deletes the receipts parked for over a week, a chunk per statement; returns how many. */
export const purgeParkedReceipts = (db: Pick<Db, 'query'>, chunk: number): Promise<number> =>
  deleteInChunks(
    db,
    `DELETE FROM pending_receipts WHERE id IN (SELECT id FROM pending_receipts WHERE received_at < now() - interval '7 days' LIMIT $1) RETURNING id`,
    chunk,
  );
