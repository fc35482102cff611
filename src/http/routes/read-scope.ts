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
