// A customer's chat accounts for the operator, newest first, in the shape the operator API
// answers for one account (toOperatorAccount: no secrets).
import type { Db } from '../db/db.js';
import type { Plan } from '../plans/plans.js';
import { errors } from '../shared/errors.js';
import { keysetPage } from '../shared/keyset.js';
import { ACCOUNT_COLUMNS, type AccountRow, toAccountRecord } from './account-record.js';
import { toOperatorAccount } from './account-view.js';
import { messagingLimitsOf } from './portfolio-store.js';

export type AccountList = ReturnType<typeof createAccountList>;

export function createAccountList(deps: { db: Pick<Db, 'query'>; publicBaseUrl: string }) {
  const { db, publicBaseUrl } = deps;
  return {
    async list(customerId: string, page: { limit: number; cursor?: string }) {
      const [customer] = await db.query<{ plan: Plan }>('SELECT plan FROM customers WHERE id = $1', [customerId]);
      if (!customer) throw errors.notFound('customer');
      const { rows: pageRows, nextCursor } = await keysetPage<AccountRow>(
        db,
        { select: `SELECT ${ACCOUNT_COLUMNS} FROM chat_accounts`, where: ['customer_id = $1'], params: [customerId] },
        page,
      );
      const limits = await messagingLimitsOf(
        db,
        pageRows.map((r) => r.id),
      );
      const chatAccounts = pageRows.map((r) =>
        toOperatorAccount(toAccountRecord(r), customer.plan, publicBaseUrl, limits.get(r.id)),
      );
      return { chatAccounts, nextCursor };
    },
  };
}
