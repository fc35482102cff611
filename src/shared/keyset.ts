// Keyset pagination, the one way every newest-first list pages (GET /messages, /broadcasts,
// /inbound-messages, suppressions, webhook deliveries, the operator's customers and accounts):
// rows ordered by (instant, id) descending, the page's last row's key as the opaque cursor
// (shared/cursor.ts), the next page as the rows strictly below that key.
import type { Queryable } from '../db/db.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/** A page asked for: at most `limit` rows, after the row the cursor names (a previous page's nextCursor). */
export type PageRequest = {
  limit: number;
  cursor?: string;
  /** The page just above the row this cursor names (a page's prevCursor); ignored with `cursor`. */
  before?: string;
};

/**
 * One page of rows, and the cursor of the next page (null on the last). `prevCursor` names the
 * page above (for `before`), null on the first page.
 */
export type Page<R> = { rows: R[]; nextCursor: string | null; prevCursor: string | null };

/**
 * The sort key of a list as SQL expressions: its instant (timestamptz) and its id (uuid), such as
 * `i.received_at` and `i.id`. The rows carry them under their column names (`received_at`, `id`).
 */
export type SortKey = { at: string; id: string };

export const BY_CREATED_AT: SortKey = { at: 'created_at', id: 'id' };

export type KeysetQuery = {
  /** `SELECT … FROM …` (joins included), without WHERE, ORDER BY or LIMIT. */
  select: string;
  /** Conditions, ANDed; their parameters are $1… in `params`. */
  where: readonly string[];
  params: readonly unknown[];
  /** BY_CREATED_AT when not given. */
  key?: SortKey;
};

/** The cursor's checks alone, for a list known to be empty (a sandbox key's): invalid_cursor as a page would. */
export function checkCursor(cursor: string | undefined): void {
  if (cursor !== undefined) decodeCursor(cursor);
}

/**
 * Runs `query` for one page: its conditions and the cursor's, newest first, `limit + 1` rows
 * fetched to tell whether another page exists. A malformed cursor is refused (invalid_cursor)
 * before the query runs.
 */
export async function keysetPage<R extends object>(
  db: Pick<Queryable, 'query'>,
  query: KeysetQuery,
  page: PageRequest,
): Promise<Page<R>> {
  const key = query.key ?? BY_CREATED_AT;
  const where = [...query.where];
  const params = [...query.params];
  const upward = page.cursor === undefined && page.before !== undefined;
  const from = page.cursor ?? page.before;
  if (from !== undefined) {
    const pos = decodeCursor(from);
    params.push(pos.createdAt.toISOString(), pos.id);
    where.push(
      `(${key.at}, ${key.id}) ${upward ? '>' : '<'} ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
    );
  }
  params.push(page.limit + 1);
  const order = upward ? 'ASC' : 'DESC';
  const rows = await db.query<R>(
    `${query.select} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${key.at} ${order}, ${key.id} ${order} LIMIT $${params.length}`,
    params,
  );
  const rowAt = columnOf(key.at);
  const rowId = columnOf(key.id);
  const positionOf = (r: R) => {
    const row = r as Record<string, unknown>;
    return { createdAt: row[rowAt] as Date, id: row[rowId] as string };
  };
  if (upward) {
    // Fetched oldest first from just above the cursor: the page is the `limit` nearest, newest first.
    const got = rows.slice(0, page.limit).reverse();
    const first = got[0];
    const last = got[got.length - 1];
    return {
      rows: got,
      nextCursor: last !== undefined ? encodeCursor(positionOf(last)) : null,
      prevCursor: rows.length > page.limit && first !== undefined ? encodeCursor(positionOf(first)) : null,
    };
  }
  const result = toPage(rows, page.limit, positionOf);
  const first = result.rows[0];
  return {
    ...result,
    prevCursor: page.cursor !== undefined && first !== undefined ? encodeCursor(positionOf(first)) : null,
  };
}

/** The column name a row carries an expression under: `i.received_at` → `received_at`. */
const columnOf = (expression: string) => expression.replace(/^\w+\./, '');

/** A page from rows fetched with LIMIT limit + 1 (newest first): the first `limit`, and the cursor of the last when more exist. */
function toPage<R>(
  rows: R[],
  limit: number,
  positionOf: (row: R) => { createdAt: Date; id: string },
): Omit<Page<R>, 'prevCursor'> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(positionOf(last)) : null };
}
