// A customer's chat accounts for the operator, newest first, in the shape the operator API
// answers for one account (toOperatorAccount: no secrets).
import type { Db } from '../db/db.js';
import type { Plan } from '../plans/plans.js';
import { decodeCursor, toPage } from '../shared/cursor.js';
import { errors } from '../shared/errors.js';
import { ACCOUNT_COLUMNS, toAccountRecord } from './account-record.js';
import { toOperatorAccount } from './account-view.js';

export type AccountList = ReturnType<typeof createAccountList>;

export function createAccountList(deps: { db: Pick<Db, 'query'>; publicBaseUrl: string }) {
  const { db, publicBaseUrl } = deps;
  return {
    async list(customerId: string, page: { limit: number; cursor?: string }) {
      const [customer] = await db.query<{ plan: Plan }>('SELECT plan FROM customers WHERE id = $1', [customerId]);
      if (!customer) throw errors.notFound('customer');
      const params: unknown[] = [customerId];
      let after = '';
      if (page.cursor !== undefined) {
        const pos = decodeCursor(page.cursor);
        params.push(pos.createdAt.toISOString(), pos.id);
        after = 'AND (created_at, id) < ($2::timestamptz, $3::uuid)';
      }
      params.push(page.limit + 1);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${ACCOUNT_COLUMNS} FROM chat_accounts WHERE customer_id = $1 ${after}
          ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
        params,
      );
      const { rows: pageRows, nextCursor } = toPage(rows, page.limit, (r) => ({
        createdAt: r.created_at as Date,
        id: r.id as string,
      }));
      const chatAccounts = pageRows.map((r) => toOperatorAccount(toAccountRecord(r), customer.plan, publicBaseUrl));
      return { chatAccounts, nextCursor };
    },
  };
}
