// A customer's usage in one UTC month (GET /usage and the portal's chart): the quota numbers as
// the quota check uses them (the quota_usage counter, the plan's limit) and the daily rollup
// (usage_daily) by day and by account, with the counted events not rolled up yet (USAGE_ROWS,
// decision 0078). Small reads by key, never a scan of messages; the rollup's stripes of one day and
// account (migration 015) and the events' rows are added up here.
import type { Db } from '../db/db.js';
import { COUNTED, USAGE_ROWS } from '../lifecycle/usage-rollup.js';
import { type Plan, PLAN_LIMITS, quotaMonth } from '../plans/plans.js';
import { type Scope, scopeWhere, seesNothing } from '../shared/scope.js';

export const USAGE_COUNTERS = ['accepted', ...COUNTED] as const;
export type UsageCounters = Record<(typeof USAGE_COUNTERS)[number], number>;

export type Usage = {
  /** The UTC month, YYYY-MM. */
  month: string;
  plan: Plan;
  limit: number;
  used: number;
  remaining: number;
  resetsAt: string;
  /** Every day of the month up to today (all of them for a past month), zeros included. */
  byDay: (UsageCounters & { date: string })[];
  /** The accounts with any count this month, by id. */
  byAccount: (UsageCounters & { chatAccountId: string })[];
  /**
   * Messages the provider priced this month (their first pricing receipt's UTC day), as its
   * receipts said: billable, free, or unknown (the receipt had no `billable` flag), in all and
   * by the receipt's category (issue #25; decision 0035).
   */
  pricing: PricingCounts & { byCategory: (PricingCounts & { category: string })[] };
};

export type PricingCounts = { billable: number; free: number; unknown: number };
const PRICING_KEYS = ['billable', 'free', 'unknown'] as const;

/** What is read: the customer, its plan now, and the account a scoped key is limited to. */
export type UsageScope = Scope & { plan: Plan };

/**
 * Who asks, as src/auth/caller.ts's Caller carries it (this layer sits below auth/): the key's
 * scope and whether it is a sandbox key, the customer and its plan.
 */
export type UsageCaller = {
  principal: { scopeAccountId: string | null; sandbox: boolean };
  tenant: { customerId: string; plan: Plan };
};

const zero = (): UsageCounters => ({ accepted: 0, sent: 0, delivered: 0, read: 0, failed: 0 });

function add(into: UsageCounters, row: Record<string, unknown>): void {
  for (const c of USAGE_COUNTERS) into[c] += Number(row[c]);
}

type PricedRow = { category: string; billable: (typeof PRICING_KEYS)[number]; n: number };

/** The priced messages of [from, to) by category and billable flag (usage_pricing_daily's stripes added up). */
function pricedRows(db: Pick<Db, 'query'>, scope: UsageScope, from: string, to: string): Promise<PricedRow[]> {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'usage_pricing_daily', params);
  params.push(from, to);
  return db.query<PricedRow>(
    `SELECT category, billable, sum(messages)::int AS n FROM usage_pricing_daily
      WHERE ${where.join(' AND ')} AND day >= $${params.length - 1}::date AND day < $${params.length}::date
      GROUP BY category, billable ORDER BY category, billable`,
    params,
  );
}

/** The quota counter of the month (the customer's, whatever the key's account). */
function quotaUsed(db: Pick<Db, 'query'>, scope: UsageScope, day1: string) {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'quota_usage', params);
  params.push(day1);
  return db.query<{ used: number }>(
    `SELECT used FROM quota_usage WHERE ${where.join(' AND ')} AND month = $${params.length}::date`,
    params,
  );
}

/** The usage rollup of [from, to) by day and account. */
function dailyRows(db: Pick<Db, 'query'>, scope: UsageScope, from: string, to: string) {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'usage_daily', params);
  params.push(from, to);
  return db.query<Record<string, unknown> & { day: string; chat_account_id: string }>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, chat_account_id, ${USAGE_COUNTERS.join(', ')}
       FROM ${USAGE_ROWS} AS u
      WHERE ${where.join(' AND ')} AND day >= $${params.length - 1}::date AND day < $${params.length}::date`,
    params,
  );
}

/** The month's priced messages in all and by category (categories in name order). */
function pricingCounts(rows: PricedRow[]) {
  const none = (): PricingCounts => ({ billable: 0, free: 0, unknown: 0 });
  const total = none();
  const byCategory = new Map<string, PricingCounts & { category: string }>();
  for (const r of rows) {
    if (!PRICING_KEYS.includes(r.billable)) continue;
    const c = byCategory.get(r.category) ?? { category: r.category, ...none() };
    c[r.billable] += Number(r.n);
    total[r.billable] += Number(r.n);
    byCategory.set(r.category, c);
  }
  return { ...total, byCategory: [...byCategory.values()] };
}

export type UsageService = ReturnType<typeof createUsageService>;

export function createUsageService(deps: { db: Pick<Db, 'query'> }) {
  const service = {
    /**
     * The caller's usage: its key's account only for a scoped key. A sandbox key reads no live
     * counts (decision 0024-sandbox-keys): its own sends are never counted, so it sees the month
     * with every count zero and the plan's limit.
     */
    async get(caller: UsageCaller, month?: string, now = new Date()): Promise<Usage> {
      const { principal, tenant } = caller;
      const usage = await service.ofScope(
        {
          customerId: tenant.customerId,
          plan: tenant.plan,
          accountId: principal.scopeAccountId,
          sandboxOnly: principal.sandbox,
        },
        month,
        now,
      );
      return usage;
    },

    /**
     * `month` is YYYY-MM (checked by the caller), default the current UTC month. The quota numbers
     * are the customer's, whatever the key's scope (the 429 of a scoped key carries them too);
     * byDay and byAccount are limited to a scoped key's account. `limit` is the plan's now: the
     * quota table keeps counts, not the plan a past month had.
     */
    async ofScope(caller: UsageScope, month?: string, now = new Date()): Promise<Usage> {
      const first = month ? new Date(`${month}-01T00:00:00Z`) : new Date(`${quotaMonth(now).month}T00:00:00Z`);
      const { month: day1, resetsAt } = quotaMonth(first);
      const [quota, rows, priced] = seesNothing(caller, 'usage_daily')
        ? [[], [], []]
        : await Promise.all([
            quotaUsed(deps.db, caller, day1),
            dailyRows(deps.db, caller, day1, resetsAt.slice(0, 10)),
            pricedRows(deps.db, caller, day1, resetsAt.slice(0, 10)),
          ]);
      const byDay = new Map<string, UsageCounters & { date: string }>();
      const lastDay = resetsAt < now.toISOString() ? new Date(resetsAt) : now;
      for (let d = first; d < lastDay; d = new Date(d.getTime() + 86400_000)) {
        const date = d.toISOString().slice(0, 10);
        byDay.set(date, { date, ...zero() });
      }
      const byAccount = new Map<string, UsageCounters & { chatAccountId: string }>();
      for (const r of rows) {
        const day = byDay.get(r.day) ?? { date: r.day, ...zero() }; // a receipt's provider time ahead of ours
        byDay.set(r.day, day);
        add(day, r);
        const account = byAccount.get(r.chat_account_id) ?? { chatAccountId: r.chat_account_id, ...zero() };
        byAccount.set(r.chat_account_id, account);
        add(account, r);
      }
      const limit = PLAN_LIMITS[caller.plan].messagesPerMonth;
      const used = Number(quota[0]?.used ?? 0);
      const sortedBy = <T>(m: Map<string, T>) =>
        [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, v]) => v);
      return {
        month: day1.slice(0, 7),
        plan: caller.plan,
        limit,
        used,
        remaining: Math.max(0, limit - used),
        resetsAt,
        byDay: sortedBy(byDay),
        byAccount: sortedBy(byAccount),
        pricing: pricingCounts(priced),
      };
    },
  };
  return service;
}
