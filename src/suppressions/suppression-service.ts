// A chat account's suppression list as its customer reads and edits it (GET/POST/DELETE
// /chat-accounts/{id}/suppressions) and its opt-out keywords. Every method takes the caller:
// the account must be one of its own (404) in its key's scope (403), numbers are read in its
// default country, and a sandbox key reads an empty list and changes nothing (403
// sandbox_not_supported), as the list and the keywords decide live sends (decision
// 0024-sandbox-keys). Every query here also takes the customer id.
import { type Caller, callerAccount, callerPhone, readScope, requireLive } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { AppError } from '../shared/errors.js';
import { checkCursor, keysetPage } from '../shared/keyset.js';
import { USER_ID_PATTERN } from '../shared/schemas.js';
import { scopeWhere, seesNothing } from '../shared/scope.js';
import type { SuppressionSource } from '../shared/vocab.js';
import { DEFAULT_OPT_OUT_KEYWORDS, foldKeyword } from './opt-out-keywords.js';
import { addSuppressions, keywordsOf, removeSuppressions } from './suppression-store.js';

export type Suppression = { phone: string; reason: string; source: SuppressionSource; since: string };

export const suppressionNotFound = () => new AppError(404, 'suppression_not_found');

const USER_ID = new RegExp(USER_ID_PATTERN);

/** A LIKE pattern for "contains", its wildcards taken literally. */
const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The entry's key: a business-scoped user id as given (kept under the id: decision 0036), else the number. */
const keyOf = (caller: Caller, given: string) => (USER_ID.test(given) ? given : callerPhone(caller, given, 'phone'));

type Row = { id: string; phone_e164: string; reason: string; source: SuppressionSource; created_at: Date };
const toSuppression = (r: Row): Suppression => ({
  phone: r.phone_e164,
  reason: r.reason,
  source: r.source,
  since: r.created_at.toISOString(),
});

export type SuppressionService = ReturnType<typeof createSuppressionService>;

export function createSuppressionService(deps: { db: Db }) {
  const { db } = deps;
  const one = async (customerId: string, accountId: string, phone: string) => {
    const [row] = await db.query<Row>(
      `SELECT id, phone_e164, reason, source, created_at FROM suppressions
        WHERE customer_id = $1 AND chat_account_id = $2 AND phone_e164 = $3`,
      [customerId, accountId, phone],
    );
    return row;
  };

  /** The caller's account named in the path, once the caller may change what live sends do. */
  const changeable = (caller: Caller, account: string) => {
    requireLive(caller);
    return callerAccount(caller, account).id;
  };

  return {
    /** Newest first, cursor paging as GET /messages; empty for a sandbox key (its cursor still checked). */
    async list(caller: Caller, account: string, page: { limit: number; cursor?: string; phoneContains?: string }) {
      const scope = readScope(caller, account);
      if (seesNothing(scope, 'suppressions')) {
        checkCursor(page.cursor);
        return { suppressions: [], nextCursor: null };
      }
      const params: unknown[] = [];
      const where = scopeWhere(scope, 'suppressions', params);
      // The portal's search: part of a number (or user id), LIKE wildcards taken literally.
      if (page.phoneContains) {
        params.push(containsPattern(page.phoneContains));
        where.push(`phone_e164 LIKE $${params.length} ESCAPE '\\'`);
      }
      const p = await keysetPage<Row>(
        db,
        { select: 'SELECT id, phone_e164, reason, source, created_at FROM suppressions', where, params },
        page,
      );
      return { suppressions: p.rows.map(toSuppression), nextCursor: p.nextCursor };
    },

    /** Adds a number (as the caller wrote it) as the customer's; one already listed keeps its entry. */
    async add(caller: Caller, account: string, given: string, reason: string | undefined) {
      const accountId = changeable(caller, account);
      const customerId = caller.tenant.customerId;
      const phone = keyOf(caller, given);
      const created =
        (await addSuppressions(db, [
          { accountId, customerId, phone, source: 'customer', reason: reason ?? 'Added by the customer' },
        ])) > 0;
      return { created, suppression: toSuppression((await one(customerId, accountId, phone))!) };
    },

    /** Removes a number, whatever put it there; 404 suppression_not_found when it is not listed. */
    async remove(caller: Caller, account: string, given: string) {
      const accountId = changeable(caller, account);
      const customerId = caller.tenant.customerId;
      const phone = keyOf(caller, given);
      if (!(await one(customerId, accountId, phone))) throw suppressionNotFound();
      await removeSuppressions(db, [{ accountId, phone }]);
    },

    async getKeywords(caller: Caller, account: string) {
      const accountId = changeable(caller, account);
      const keywords = (await keywordsOf(db, [accountId])).get(accountId) ?? DEFAULT_OPT_OUT_KEYWORDS;
      return { chatAccountId: accountId, keywords: [...keywords] };
    },

    /** Replaces the account's keywords (stored trimmed and upper-cased, once each); [] turns them off. */
    async setKeywords(caller: Caller, account: string, keywords: string[]) {
      const accountId = changeable(caller, account);
      const customerId = caller.tenant.customerId;
      const folded = [...new Set(keywords.map(foldKeyword).filter((k) => k !== ''))];
      await db.query(
        `INSERT INTO opt_out_keywords (chat_account_id, customer_id, keywords) VALUES ($1, $2, $3::text[])
         ON CONFLICT (chat_account_id) DO UPDATE SET keywords = EXCLUDED.keywords, updated_at = now()`,
        [accountId, customerId, folded],
      );
      return { chatAccountId: accountId, keywords: folded };
    },
  };
}
