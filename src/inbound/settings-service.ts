// The inbox filter of an account and the customer's forwarding rules (plan Pro). Every method
// takes the caller and applies who may do what: the plan, the key's scope (rules belong to the
// whole customer), the caller's accounts and phone numbers in its default country, and the
// sandbox rule (decision 0024-sandbox-keys): a sandbox key cannot read or change an inbox filter
// (it shapes live traffic), and manages only sandbox rules, which no live message reaches.
import crypto from 'node:crypto';

import {
  type Caller,
  callerAccount,
  callerPhones,
  ownAccount,
  readScope,
  requireLive,
  requirePlan,
  requireUnscoped,
} from '../auth/caller.js';
import { lockCustomer } from '../customers/customer-service.js';
import type { Db } from '../db/db.js';
import { checkDestinationUrl } from '../outbound/destination-check.js';
import type { Resolve } from '../outbound/outbound-client.js';
import { AppError, errors } from '../shared/errors.js';
import { type Scope, scopeWhere } from '../shared/scope.js';
import type { Condition } from './forwarding-match.js';
import { ruleMatcher } from './rule-matcher.js';

export const MAX_FILTER_NUMBERS = 10_000;
export const MAX_RULES = 50;

type Row = Record<string, unknown>;
const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null);

function toRule(r: Row) {
  return {
    id: r.id as string,
    name: r.name as string,
    chatAccountId: (r.chat_account_id as string | null) ?? null,
    condition: {
      type: r.condition_type as Condition['type'],
      pattern: r.pattern as string,
      caseSensitive: r.case_sensitive as boolean,
    },
    destination: { type: 'http' as const, url: r.url as string },
    isActive: r.is_active as boolean,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export type RuleInput = {
  name?: string;
  chatAccountId?: string | null;
  condition?: { type: Condition['type']; pattern: string; caseSensitive?: boolean };
  destination?: { type: 'http'; url: string };
  isActive?: boolean;
};

export const ruleNotFound = () => new AppError(404, 'forwarding_rule_not_found');

export const FILTER_MODES = ['off', 'whitelist', 'blacklist'] as const;

/** The inbox and its settings: plan Pro (403 feature_not_available). */
function checkAllowed(caller: Caller): void {
  requirePlan(caller, 'inbox');
}

/** The rules a caller manages: the customer's (not with a key scoped to one account), live or sandbox as its key is. */
function ruleOwner(caller: Caller): Scope {
  checkAllowed(caller);
  requireUnscoped(caller);
  return readScope(caller);
}

/** The account of a filter: plan, then never a sandbox key, then the caller's account in scope. */
function filterAccount(caller: Caller, accountId: string): string {
  checkAllowed(caller);
  requireLive(caller);
  return callerAccount(caller, accountId).id;
}

type SettingsDeps = { db: Db; allowPrivateUrls: boolean; resolve: Resolve };

type NewRuleInput = RuleInput & {
  condition: NonNullable<RuleInput['condition']>;
  destination: NonNullable<RuleInput['destination']>;
};

async function validate(deps: SettingsDeps, customerId: string, input: RuleInput) {
  const problems = [];
  if (input.condition) {
    const reason = await ruleMatcher().check(customerId, {
      type: input.condition.type,
      pattern: input.condition.pattern,
      caseSensitive: input.condition.caseSensitive ?? false,
    });
    if (reason) problems.push({ path: 'condition.pattern', message: reason });
  }
  if (problems.length > 0) throw errors.validation(problems);
  if (input.destination) {
    const reason = await checkDestinationUrl(input.destination.url, {
      allowPrivate: deps.allowPrivateUrls,
      resolve: deps.resolve,
    });
    if (reason) throw errors.validation([{ path: 'destination.url', message: reason }]);
  }
}

async function getRule(db: Db, owner: Scope, id: string) {
  const params: unknown[] = [];
  const where = scopeWhere(owner, 'forwarding_rules', params);
  params.push(id);
  const [row] = await db.query<Row>(
    `SELECT * FROM forwarding_rules WHERE ${where.join(' AND ')} AND id = $${params.length}`,
    params,
  );
  if (!row) throw ruleNotFound();
  return toRule(row);
}

async function insertRule(deps: SettingsDeps, caller: Caller, input: NewRuleInput) {
  const { db } = deps;
  const owner = ruleOwner(caller);
  ownAccount(caller, input.chatAccountId);
  await validate(deps, owner.customerId, input);
  return db.transaction(async (tx) => {
    await lockCustomer(tx, owner.customerId);
    const params: unknown[] = [];
    const where = scopeWhere(owner, 'forwarding_rules', params);
    const [count] = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM forwarding_rules WHERE ${where.join(' AND ')}`,
      params,
    );
    if ((count?.n ?? 0) >= MAX_RULES) throw errors.limitReached('forwarding rules', MAX_RULES);
    const [row] = await tx.query<Row>(
      `INSERT INTO forwarding_rules (id, customer_id, chat_account_id, name, condition_type, pattern, case_sensitive, url, is_active, sandbox)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
        crypto.randomUUID(),
        owner.customerId,
        input.chatAccountId ?? null,
        input.name ?? '',
        input.condition.type,
        input.condition.pattern,
        input.condition.caseSensitive ?? false,
        input.destination.url,
        input.isActive ?? true,
        owner.sandboxOnly === true,
      ],
    );
    return toRule(row!);
  });
}

async function changeRule(deps: SettingsDeps, caller: Caller, id: string, input: RuleInput) {
  const { db } = deps;
  const owner = ruleOwner(caller);
  ownAccount(caller, input.chatAccountId);
  const current = await getRule(deps.db, owner, id);
  const condition = input.condition ? { ...current.condition, ...input.condition } : undefined;
  await validate(deps, owner.customerId, { ...input, condition });
  const [row] = await db.query<Row>(
    `UPDATE forwarding_rules SET name = COALESCE($3, name), chat_account_id = CASE WHEN $4::boolean THEN $5::uuid ELSE chat_account_id END,
            condition_type = COALESCE($6, condition_type), pattern = COALESCE($7, pattern), case_sensitive = COALESCE($8, case_sensitive),
            url = COALESCE($9, url), is_active = COALESCE($10, is_active), updated_at = now()
      WHERE customer_id = $1 AND id = $2 AND sandbox = $11 RETURNING *`,
    [
      owner.customerId,
      id,
      input.name ?? null,
      input.chatAccountId !== undefined,
      input.chatAccountId ?? null,
      condition?.type ?? null,
      condition?.pattern ?? null,
      condition?.caseSensitive ?? null,
      input.destination?.url ?? null,
      input.isActive ?? null,
      owner.sandboxOnly === true,
    ],
  );
  if (!row) throw ruleNotFound();
  return toRule(row);
}

export type SettingsService = ReturnType<typeof createSettingsService>;

export function createSettingsService(deps: SettingsDeps) {
  const { db } = deps;

  return {
    checkAllowed,

    /**
     * Does a sample text match the condition? The rule engine's own matcher, so the answer is what
     * inbound forwarding would do (first MAX_MATCH_TEXT characters, the same time budget).
     */
    async checkSample(
      customerId: string,
      condition: Condition,
      sample: string,
    ): Promise<{ matched: boolean; exceeded: boolean }> {
      await validate(deps, customerId, { condition });
      const r = await ruleMatcher().match(customerId, [condition], sample);
      return { matched: r.matched[0] === true, exceeded: r.exceeded };
    },

    async getFilter(caller: Caller, account: string) {
      const accountId = filterAccount(caller, account);
      const [row] = await db.query<{ mode: string; numbers: string[] }>(
        'SELECT mode, numbers FROM inbox_filters WHERE customer_id = $1 AND chat_account_id = $2',
        [caller.tenant.customerId, accountId],
      );
      return { chatAccountId: accountId, mode: row?.mode ?? 'off', numbers: row?.numbers ?? [] };
    },

    /** `numbers` as the caller wrote them: each is read in the customer's default country. */
    async setFilter(caller: Caller, account: string, mode: string, given: string[]) {
      const accountId = filterAccount(caller, account);
      const customerId = caller.tenant.customerId;
      if (!(FILTER_MODES as readonly string[]).includes(mode))
        throw errors.validation([{ path: 'mode', message: `must be one of ${FILTER_MODES.join(', ')}` }]);
      const numbers = callerPhones(caller, given, 'numbers', 'is not a phone number');
      await db.query(
        `INSERT INTO inbox_filters (chat_account_id, customer_id, mode, numbers) VALUES ($1, $2, $3, $4::text[])
         ON CONFLICT (chat_account_id) DO UPDATE SET mode = EXCLUDED.mode, numbers = EXCLUDED.numbers, updated_at = now()`,
        [accountId, customerId, mode, [...new Set(numbers)]],
      );
      return { chatAccountId: accountId, mode, numbers: [...new Set(numbers)] };
    },

    createRule: (caller: Caller, input: NewRuleInput) => insertRule(deps, caller, input),

    async listRules(caller: Caller) {
      const params: unknown[] = [];
      const where = scopeWhere(ruleOwner(caller), 'forwarding_rules', params);
      return (
        await db.query<Row>(
          `SELECT * FROM forwarding_rules WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
          params,
        )
      ).map(toRule);
    },

    getRule: (caller: Caller, id: string) => getRule(db, ruleOwner(caller), id),

    updateRule: (caller: Caller, id: string, input: RuleInput) => changeRule(deps, caller, id, input),

    async deleteRule(caller: Caller, id: string) {
      const owner = ruleOwner(caller);
      const rows = await db.query(
        'DELETE FROM forwarding_rules WHERE customer_id = $1 AND sandbox = $2 AND id = $3 RETURNING id',
        [owner.customerId, owner.sandboxOnly === true, id],
      );
      if (rows.length === 0) throw ruleNotFound();
    },
  };
}
