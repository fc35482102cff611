import type { Principal, Tenant } from '../../auth/directory.js';
import type { Scope } from '../../messages/message-queries.js';
import { errors } from '../../shared/errors.js';

/**
 * Which account a read is limited to: the key's scope, narrowed by a chatAccountId query that
 * must name one of the caller's accounts (404 account_not_found) inside that scope (403).
 */
export function resolveReadScope(principal: Principal, tenant: Tenant, requested: string | undefined): Scope {
  if (requested === undefined) return { customerId: tenant.customerId, accountId: principal.scopeAccountId };
  const id = requested.toLowerCase();
  if (!tenant.accounts.some((a) => a.id === id)) throw errors.accountNotFound();
  if (principal.scopeAccountId !== null && principal.scopeAccountId !== id) throw errors.keyScopeViolation();
  return { customerId: tenant.customerId, accountId: id };
}

/** A query timestamp as a Date within years 1–9999 (what both JavaScript and SQL can hold). */
export function parseTimestamp(value: string | undefined, path: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  const year = d.getUTCFullYear();
  if (Number.isNaN(d.getTime()) || year < 1 || year > 9999)
    throw errors.validation([{ path, message: 'must be an ISO 8601 timestamp between years 1 and 9999' }]);
  return d;
}
