// Who is calling, as every service takes it: an API key's principal (src/http/server.ts,
// callerOf) or a portal user mapped to one (src/http/portal/deps.ts, never sandbox, never scoped),
// with the customer's tenant. The rules about who may do what that several capabilities share
// live here, and the services apply them (decision 0024-sandbox-keys): the plan gates, the rule of a key
// scoped to one account, the sandbox rule, and phone numbers read in the customer's default
// country. The HTTP edge applies none of them itself.
import type { AccountRecord } from '../accounts/account-record.js';
import { type Feature, requireFeature } from '../plans/plans.js';
import { errors } from '../shared/errors.js';
import { normalizePhone } from '../shared/phone.js';
import type { Scope } from '../shared/scope.js';
import type { Principal, Tenant } from './directory.js';

export type Caller = { principal: Principal; tenant: Tenant };

export type { Scope };

/** 403 feature_not_available when the caller's plan lacks the feature. */
export function requirePlan(caller: Caller, feature: Feature): void {
  requireFeature(caller.tenant.plan, feature);
}

/** What belongs to the customer as a whole (webhooks, forwarding rules): not for a key scoped to one account. */
export function requireUnscoped(caller: Caller): void {
  if (caller.principal.scopeAccountId !== null) throw errors.keyScopeInsufficient();
}

/** Changes to what live traffic does: never with a sandbox key (403 sandbox_not_supported). */
export function requireLive(caller: Caller): void {
  if (caller.principal.sandbox) throw errors.sandboxNotSupported();
}

/**
 * Which account a read is limited to: the key's scope, narrowed by a chatAccountId that must name
 * one of the caller's accounts (404 account_not_found) inside that scope (403 key_scope_violation).
 */
export function readScope(caller: Caller, requested?: string): Scope {
  const { principal, tenant } = caller;
  const sandboxOnly = principal.sandbox;
  if (requested === undefined)
    return { customerId: tenant.customerId, accountId: principal.scopeAccountId, sandboxOnly };
  const id = requested.toLowerCase();
  if (!tenant.accounts.some((a) => a.id === id)) throw errors.accountNotFound();
  if (principal.scopeAccountId !== null && principal.scopeAccountId !== id) throw errors.keyScopeViolation();
  return { customerId: tenant.customerId, accountId: id, sandboxOnly };
}

/** The account a lookup or a setting names: the given id (the caller's, in scope), the key's scope, or the only one. */
export function callerAccount(caller: Caller, requested: string | undefined): AccountRecord {
  const { principal, tenant } = caller;
  const wanted = requested?.toLowerCase();
  if (wanted !== undefined) {
    const account = tenant.accounts.find((a) => a.id === wanted);
    if (!account) throw errors.accountNotFound();
    if (principal.scopeAccountId !== null && principal.scopeAccountId !== wanted) throw errors.keyScopeViolation();
    return account;
  }
  if (principal.scopeAccountId !== null) {
    const scoped = tenant.accounts.find((a) => a.id === principal.scopeAccountId);
    if (!scoped) throw errors.accountNotFound();
    return scoped;
  }
  if (tenant.accounts.length !== 1) throw errors.chatAccountRequired();
  return tenant.accounts[0]!;
}

/** The accounts a caller sees: all of the customer's, or the one a scoped key is limited to. */
export function visibleAccounts(caller: Caller): AccountRecord[] {
  const scope = caller.principal.scopeAccountId;
  return caller.tenant.accounts.filter((a) => scope === null || a.id === scope);
}

/** An optional account id in a body: when given, one of the caller's accounts (404 account_not_found). */
export function ownAccount(caller: Caller, id: string | null | undefined): void {
  if (id && !caller.tenant.accounts.some((a) => a.id === id.toLowerCase())) throw errors.accountNotFound();
}

export const PHONE_PROBLEM =
  'is not a phone number (E.164, international digits, or a national number of your default country)';

/** A number the caller gave, in E.164 (its national form read in the customer's default country). */
export function callerPhone(caller: Caller, phone: string, path: string): string {
  const e164 = normalizePhone(phone, caller.tenant.defaultCountry);
  if (!e164) throw errors.validation([{ path, message: PHONE_PROBLEM }]);
  return e164;
}

/** Every number of a list in E.164, or one validation_error naming each one that is not a number. */
export function callerPhones(caller: Caller, phones: string[], path: string, message = PHONE_PROBLEM): string[] {
  const problems: { path: string; message: string }[] = [];
  const e164s = phones.map((p, i) => {
    const e164 = normalizePhone(p, caller.tenant.defaultCountry);
    if (!e164) problems.push({ path: `${path}.${i}`, message });
    return e164 ?? '';
  });
  if (problems.length > 0) throw errors.validation(problems);
  return e164s;
}
