// Deleting many rows in short transactions: a statement that deletes at most $1 rows (and returns
// one row per row deleted) runs again until it deletes fewer. The purger's passes use it.
import type { Queryable } from './db.js';

/** Runs `sql` with `[chunk]` until it returns fewer than `chunk` rows; the total returned. */
export async function deleteInChunks(db: Pick<Queryable, 'query'>, sql: string, chunk: number): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await db.query(sql, [chunk]);
    total += rows.length;
    if (rows.length < chunk) return total;
  }
}
