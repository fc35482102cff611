// Reading customers for the operator: a paged, searchable list and one month's quota use.
import type { Db } from '../db/db.js';
import { type Plan, PLAN_LIMITS } from '../plans/plans.js';
import { decodeCursor, toPage } from '../shared/cursor.js';
import { errors } from '../shared/errors.js';
import { type Customer, CUSTOMER_COLUMNS, toCustomer } from './customer-service.js';

export type CustomerFilter = { q?: string; plan?: Plan; limit: number; cursor?: string };

export type Usage = {
  customerId: string;
  /** The UTC month, YYYY-MM. */
  month: string;
  /** The customer's current plan: the quota table keeps counts, not the plan a past month had. */
  plan: Plan;
  limit: number;
  used: number;
  remaining: number;
  /** When this month's quota renews (the first instant of the next UTC month). */
  resetsAt: string;
};

/** `%`, `_` and `\` in a search string match themselves, not any text. */
const likeLiteral = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export type CustomerQueries = ReturnType<typeof createCustomerQueries>;

export function createCustomerQueries(db: Pick<Db, 'query'>) {
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
      if (f.cursor !== undefined) {
        const pos = decodeCursor(f.cursor);
        params.push(pos.createdAt.toISOString(), pos.id);
        where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
      }
      params.push(f.limit + 1);
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${CUSTOMER_COLUMNS} FROM customers ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
          ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
        params,
      );
      const page = toPage(rows, f.limit, (r) => ({ createdAt: r.created_at as Date, id: r.id as string }));
      return { customers: page.rows.map(toCustomer), nextCursor: page.nextCursor };
    },

    /** One read of the quota counter's row (no scan of the month's messages). */
    async usage(customerId: string, month: { year: number; month: number }): Promise<Usage> {
      const first = new Date(Date.UTC(month.year, month.month - 1, 1));
      const rows = await db.query<{ plan: Plan; used: number | null }>(
        `SELECT c.plan, q.used FROM customers c
           LEFT JOIN quota_usage q ON q.customer_id = c.id AND q.month = $2::date
          WHERE c.id = $1`,
        [customerId, first.toISOString().slice(0, 10)],
      );
      const r = rows[0];
      if (!r) throw errors.notFound();
      const limit = PLAN_LIMITS[r.plan].messagesPerMonth;
      const used = Number(r.used ?? 0);
      return {
        customerId,
        month: first.toISOString().slice(0, 7),
        plan: r.plan,
        limit,
        used,
        remaining: Math.max(0, limit - used),
        resetsAt: new Date(Date.UTC(month.year, month.month, 1)).toISOString(),
      };
    },
  };
}
