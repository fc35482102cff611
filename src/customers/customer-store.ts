// Reading customers for the operator: a paged, searchable list and one month's quota use.
import type { Db } from '../db/db.js';
import type { Plan } from '../plans/plans.js';
import { errors } from '../shared/errors.js';
import { keysetPage } from '../shared/keyset.js';
import { createUsageService, type Usage as CustomerUsage } from '../usage/usage-service.js';
import { type Customer, CUSTOMER_COLUMNS, type CustomerRow, toCustomer } from './customer-service.js';

export type CustomerFilter = { q?: string; plan?: Plan; limit: number; cursor?: string };

/** A customer's quota use for the operator: GET /usage's quota numbers with the customer's id. */
export type Usage = Pick<CustomerUsage, 'month' | 'plan' | 'limit' | 'used' | 'remaining' | 'resetsAt'> & {
  customerId: string;
};

/** `%`, `_` and `\` in a search string match themselves, not any text. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export type CustomerQueries = ReturnType<typeof createCustomerQueries>;

export function createCustomerQueries(db: Pick<Db, 'query'>) {
  const usage = createUsageService({ db });
  return {
    /** Newest first; `q` is a case-insensitive contains-search on the name. */
    async list(f: CustomerFilter): Promise<{ customers: Customer[]; nextCursor: string | null }> {
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (clause: (n: string) => string, value: unknown) => {
        params.push(value);
        where.push(clause(`$${params.length}`));
      };
      if (f.q !== undefined) add((n) => `name ILIKE ${n} ESCAPE '\\'`, `%${likeLiteral(f.q)}%`);
      if (f.plan !== undefined) add((n) => `plan = ${n}`, f.plan);
      const page = await keysetPage<CustomerRow>(
        db,
        { select: `SELECT ${CUSTOMER_COLUMNS} FROM customers`, where, params },
        f,
      );
      return { customers: page.rows.map(toCustomer), nextCursor: page.nextCursor };
    },

    /**
     * The customer's usage in one month, as GET /usage computes it (usage/usage-service.ts owns the
     * numbers: the quota counter, the plan's limit, the daily rollup), with the customer's id.
     */
    async usage(customerId: string, month: { year: number; month: number }): Promise<Usage> {
      const [c] = await db.query<{ plan: Plan }>('SELECT plan FROM customers WHERE id = $1', [customerId]);
      if (!c) throw errors.notFound('customer');
      const yyyyMm = `${month.year}-${String(month.month).padStart(2, '0')}`;
      const u = await usage.ofScope({ customerId, plan: c.plan, accountId: null }, yyyyMm);
      const { month: m, plan, limit, used, remaining, resetsAt } = u;
      return { customerId, month: m, plan, limit, used, remaining, resetsAt };
    },
  };
}
