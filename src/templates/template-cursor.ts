// Our nextCursor wraps the provider's `after` cursor with the account it belongs to, so a cursor
// is opaque, and one from another account (or made up) is refused as invalid_cursor.
import { errors } from '../shared/errors.js';

const MAX_PROVIDER_CURSOR = 1000;

export function wrapCursor(accountId: string, after: string): string {
  return Buffer.from(JSON.stringify(['t', accountId, after])).toString('base64url');
}

/** The provider's `after` cursor inside one of our cursors for this account. */
export function unwrapCursor(accountId: string, cursor: string): string {
  try {
    if (!/^[A-Za-z0-9_-]{1,2000}$/.test(cursor)) throw new Error('charset');
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 3) throw new Error('shape');
    const [tag, account, after] = parsed as unknown[];
    if (
      tag !== 't' ||
      account !== accountId ||
      typeof after !== 'string' ||
      after === '' ||
      after.length > MAX_PROVIDER_CURSOR
    )
      throw new Error('fields');
    return after;
  } catch {
    throw errors.invalidCursor();
  }
}

/** The cursor of the next page: only when the provider says more follow (`paging.next`). */
export function nextCursorOf(accountId: string, paging: unknown): string | null {
  const p = paging as { next?: unknown; cursors?: { after?: unknown } } | null | undefined;
  const after = p?.cursors?.after;
  if (
    typeof p?.next !== 'string' ||
    p.next === '' ||
    typeof after !== 'string' ||
    after === '' ||
    after.length > MAX_PROVIDER_CURSOR
  )
    return null;
  return wrapCursor(accountId, after);
}
