// Customers: created and changed by the operator.
import crypto from 'node:crypto';

import type { Db, Queryable } from '../db/db.js';
import { clipRetention } from '../lifecycle/clip-retention.js';
import type { Plan } from '../plans/plans.js';
import { PLAN_LIMITS, quotaMonth } from '../plans/plans.js';
import { errors } from '../shared/errors.js';

export type Customer = {
  id: string;
  name: string;
  plan: Plan;
  defaultCountry: string | null;
  /** Self-serve linking (decision 0076): as set for this customer; null: its plan decides. */
  embeddedSignup: boolean | null;
  createdAt: string;
  updatedAt: string;
};

export const CUSTOMER_COLUMNS = 'id, name, plan, default_country, embedded_signup, created_at, updated_at';

/** A row of CUSTOMER_COLUMNS as the database returns it. */
export type CustomerRow = {
  id: string;
  name: string;
  plan: Plan;
  default_country: string | null;
  embedded_signup: boolean | null;
  created_at: Date;
  updated_at: Date;
};

export function toCustomer(r: CustomerRow): Customer {
  return {
    id: r.id,
    name: r.name,
    plan: r.plan,
    defaultCountry: r.default_country,
    embeddedSignup: r.embedded_signup,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/**
 * Locks the customer's row for the rest of the transaction and returns its plan (null when the
 * customer does not exist). Taken before counting what the customer has (keys, accounts,
 * endpoints, rules, uploads), it makes "count, then add one" hold its cap under concurrency.
 */
export async function lockCustomer(tx: Pick<Queryable, 'query'>, customerId: string): Promise<{ plan: Plan } | null> {
  const [row] = await tx.query<{ plan: Plan }>('SELECT plan FROM customers WHERE id = $1 FOR UPDATE', [customerId]);
  return row ?? null;
}

export type CustomerService = ReturnType<typeof createCustomerService>;

export function createCustomerService(deps: {
  db: Db;
  /** Drops the customer's cached directory entry; called inside the changing transaction. */
  invalidate: (tx: Queryable, customerId: string) => Promise<void>;
}) {
  const { db, invalidate } = deps;
  return {
    async create(input: { name: string; plan: Plan; defaultCountry?: string | null }): Promise<Customer> {
      const rows = await db.query<CustomerRow>(
        `INSERT INTO customers (id, name, plan, default_country) VALUES ($1, $2, $3, $4) RETURNING ${CUSTOMER_COLUMNS}`,
        [crypto.randomUUID(), input.name, input.plan, input.defaultCountry ?? null],
      );
      return toCustomer(rows[0]!);
    },

    async get(id: string): Promise<Customer & { usage: { month: string; used: number; limit: number } }> {
      const { month } = quotaMonth(new Date());
      const rows = await db.query<CustomerRow & { used: number }>(
        `SELECT ${CUSTOMER_COLUMNS}, COALESCE((SELECT used FROM quota_usage q WHERE q.customer_id = c.id AND q.month = $2), 0) AS used
           FROM customers c WHERE id = $1`,
        [id, month],
      );
      const r = rows[0];
      if (!r) throw errors.notFound('customer');
      const c = toCustomer(r);
      return { ...c, usage: { month, used: r.used, limit: PLAN_LIMITS[c.plan].messagesPerMonth } };
    },

    /** A plan change also re-clips the lifetime of stored messages to the new retention. */
    async update(
      id: string,
      patch: { name?: string; plan?: Plan; defaultCountry?: string | null; embeddedSignup?: boolean | null },
    ): Promise<Customer> {
      return db.transaction(async (tx) => {
        const rows = await tx.query<CustomerRow>(
          `UPDATE customers SET
              name = COALESCE($2, name),
              plan = COALESCE($3, plan),
              default_country = CASE WHEN $4::boolean THEN $5 ELSE default_country END,
              embedded_signup = CASE WHEN $6::boolean THEN $7::boolean ELSE embedded_signup END,
              updated_at = now()
            WHERE id = $1 RETURNING ${CUSTOMER_COLUMNS}`,
          [
            id,
            patch.name ?? null,
            patch.plan ?? null,
            patch.defaultCountry !== undefined,
            patch.defaultCountry ?? null,
            patch.embeddedSignup !== undefined,
            patch.embeddedSignup ?? null,
          ],
        );
        const r = rows[0];
        if (!r) throw errors.notFound('customer');
        const customer = toCustomer(r);
        if (patch.plan !== undefined) {
          await clipRetention(tx, id, PLAN_LIMITS[customer.plan].retentionDays);
        }
        await invalidate(tx, id);
        return customer;
      });
    },
  };
}
