// Who may use an account's template catalog, checked in the order docs/api.md gives: the account
// (404, then the key's scope 403), the plan (403), the key's templateAccess (403), sandbox keys
// on create (403), then whether the account has a catalog we can reach (422).
import type { AccountRecord } from '../accounts/account-record.js';
import type { Principal, Tenant } from '../auth/directory.js';
import { PLAN_LIMITS } from '../plans/plans.js';
import { errors, templateErrors } from '../shared/errors.js';
import type { TemplateOperation } from './provider-errors.js';

export function authorizeTemplateCall(
  principal: Principal,
  tenant: Tenant,
  accountId: string,
  operation: TemplateOperation,
): AccountRecord {
  const id = accountId.toLowerCase();
  const account = tenant.accounts.find((a) => a.id === id);
  if (!account) throw errors.accountNotFound();
  if (principal.scopeAccountId !== null && principal.scopeAccountId !== id) throw errors.keyScopeViolation();
  if (!PLAN_LIMITS[tenant.plan].templates) throw errors.featureNotAvailable(tenant.plan);
  const access = principal.templateAccess;
  if (operation === 'list' && access !== 'read' && access !== 'manage') throw templateErrors.accessInsufficient('read');
  if (operation === 'create' && access !== 'manage') throw templateErrors.accessInsufficient('manage');
  // A sandbox key changes nothing outside the service: creating at the provider is not simulated.
  if (operation === 'create' && principal.sandbox) throw templateErrors.sandboxNotSupported();
  if (account.type !== 'OFFICIAL' || account.wabaId === null)
    throw templateErrors.managementUnavailable('only OFFICIAL accounts have a template catalog');
  if (!account.hasManagementToken)
    throw templateErrors.managementUnavailable(
      'no management credential is loaded for this account; the service operator must load one',
    );
  return account;
}
