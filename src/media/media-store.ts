// Where uploaded bytes live. Every API and worker process must read them, so the default store is
// the database itself (one bytea row per file). The interface is all the rest of the code sees, so
// an object store can replace it; that store would also need a sweep for bytes whose metadata row
// is gone (here a foreign key cascades them away).
import type { Db, Queryable } from '../db/db.js';

export interface MediaStore {
  /** Stores a file's bytes, inside the transaction that records its metadata. */
  put(tx: Queryable, mediaId: string, customerId: string, data: Buffer): Promise<void>;
  /** The bytes, or null when the file is gone. */
  get(mediaId: string): Promise<Buffer | null>;
}

export function createDbMediaStore(db: Db): MediaStore {
  return {
    async put(tx, mediaId, customerId, data) {
      // Base64 text rather than a bytea parameter: the embedded driver encodes bytea parameters
      // byte by byte in JavaScript (about 8 s for 20 MB), while decode() runs inside the database.
      await tx.query(`INSERT INTO media_blobs (media_id, customer_id, data) VALUES ($1, $2, decode($3, 'base64'))`, [
        mediaId,
        customerId,
        data.toString('base64'),
      ]);
    },
    async get(mediaId) {
      const [row] = await db.query<{ data: string }>(
        `SELECT encode(data, 'base64') AS data FROM media_blobs WHERE media_id = $1`,
        [mediaId],
      );
      return row ? Buffer.from(row.data, 'base64') : null;
    },
  };
}
