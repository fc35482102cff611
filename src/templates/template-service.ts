// The template catalog, read and written live at the provider's management API with the
// account's management credential (unsealed here, in memory, for the one call).
import type { Caller } from '../auth/caller.js';
import type { Directory, Tenant } from '../auth/directory.js';
import type { Db } from '../db/db.js';
import { PLAN_LIMITS } from '../plans/plans.js';
import type { ManagementRequest, ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { errors, templateErrors } from '../shared/errors.js';
import { type TemplateOperation, toTemplateError } from './provider-errors.js';
import { authorizeTemplateCall } from './template-access.js';
import { nextCursorOf, unwrapCursor } from './template-cursor.js';
import {
  checkDefinition,
  createPayload,
  type CreateTemplateRequest,
  templateComponents,
} from './template-definition.js';
import { loadManagementCredential, markManagementVerified } from './template-store.js';
import { type Template, TEMPLATE_FIELDS, toTemplate } from './template-view.js';

export const DEFAULT_TEMPLATE_PAGE = 50;
/** verifiedAt is refreshed at most this often, so that listing does not write on every call. */
const VERIFIED_REFRESH_MS = 60_000;

export type ListTemplatesQuery = { status?: string; name?: string; limit?: number; cursor?: string };
export type TemplateService = ReturnType<typeof createTemplateService>;

type TemplateServiceDeps = {
  db: Db;
  sealer: Sealer;
  provider: Pick<ProviderClient, 'manage'>;
  directory: Pick<Directory, 'invalidate'>;
};

/** One management call for an authorized account; a success also proves the credential. */
async function callProvider(
  deps: TemplateServiceDeps,
  tenant: Tenant,
  account: ReturnType<typeof authorizeTemplateCall>,
  operation: TemplateOperation,
  req: Omit<ManagementRequest, 'token' | 'path'> & { path: string },
) {
  const { db, sealer, provider, directory } = deps;
  const credential = await loadManagementCredential(db, tenant.customerId, account.id);
  if (!credential)
    throw templateErrors.managementUnavailable(
      'no management credential is loaded for this account; the service operator must load one',
    );
  let token: string;
  try {
    token = sealer.open(credential.sealedToken, {
      table: 'chat_accounts',
      column: 'management_token_enc',
      id: account.id,
    });
  } catch {
    throw templateErrors.managementUnavailable(
      'the management credential of this account cannot be read; the service operator must load it again',
    );
  }
  const outcome = await provider.manage({ ...req, path: [credential.wabaId, req.path], token });
  if (!outcome.ok) throw toTemplateError(operation, outcome, [token]);
  const last = account.templateManagementVerifiedAt;
  if (last === null || Date.now() - last.getTime() > VERIFIED_REFRESH_MS) {
    await db.transaction(async (tx) => {
      if (await markManagementVerified(tx, tenant.customerId, account.id, credential.sealedToken))
        await directory.invalidate(tx, tenant.customerId);
    });
  }
  return outcome.body as Record<string, unknown> | null;
}

export function createTemplateService(deps: TemplateServiceDeps) {
  return {
    /** Whether the caller's plan has the template catalog (a page shows its gate otherwise). */
    catalogAllowed: (caller: Caller): boolean => PLAN_LIMITS[caller.tenant.plan].templates,

    async list(
      caller: Caller,
      accountId: string,
      q: ListTemplatesQuery,
    ): Promise<{ templates: Template[]; nextCursor: string | null }> {
      const { principal, tenant } = caller;
      const account = authorizeTemplateCall(principal, tenant, accountId, 'list');
      const after = q.cursor !== undefined ? unwrapCursor(account.id, q.cursor) : undefined;
      const body = await callProvider(deps, tenant, account, 'list', {
        method: 'GET',
        path: 'message_templates',
        query: {
          fields: TEMPLATE_FIELDS,
          limit: String(q.limit ?? DEFAULT_TEMPLATE_PAGE),
          after,
          status: q.status,
          name: q.name,
        },
      });
      if (!Array.isArray(body?.data))
        throw templateErrors.providerUnavailable('the provider answered the listing without templates');
      const items = (body.data as unknown[]).filter(
        (t): t is Record<string, unknown> => typeof t === 'object' && t !== null,
      );
      return { templates: items.map(toTemplate), nextCursor: nextCursorOf(account.id, body.paging) };
    },

    /** Creates a template (a body, and the components around it); the provider keeps it PENDING for review. */
    async create(caller: Caller, accountId: string, req: CreateTemplateRequest): Promise<Template> {
      const { principal, tenant } = caller;
      const problems = checkDefinition(req);
      if (problems.length > 0) throw errors.validation(problems);
      const account = authorizeTemplateCall(principal, tenant, accountId, 'create');
      const body = await callProvider(deps, tenant, account, 'create', {
        method: 'POST',
        path: 'message_templates',
        body: createPayload(req),
      });
      const id = body?.id;
      if (typeof id !== 'string' && typeof id !== 'number') {
        throw templateErrors.providerUnavailable(
          'the provider answered without a template id; list the templates to see whether it was created',
        );
      }
      return toTemplate({
        id,
        name: req.name,
        language: req.language,
        // The provider may file it under another category than the one asked for: its word wins.
        category: typeof body?.category === 'string' ? body.category : req.category,
        status: typeof body?.status === 'string' ? body.status : 'PENDING',
        parameter_format: req.parameterFormat,
        components: templateComponents(req),
      });
    },
  };
}
