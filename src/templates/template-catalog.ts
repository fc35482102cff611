// One template of an account's catalog, read live at the provider's management API with the
// account's management credential, and kept a short while per process: the accept path checks
// each template send against it (decision 0068), and the dispatcher asks its category
// (template-categories.ts). Null when it cannot be known: no credential, provider trouble.
import type { Db } from '../db/db.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import type { Problem } from '../shared/errors.js';
import type { TemplateVariant } from '../shared/template-parameters.js';
import { templateCatalogProblems } from './template-send.js';
import { loadManagementCredential } from './template-store.js';

export type CatalogDeps = { db: Db; sealer: Sealer; provider: Pick<ProviderClient, 'manage'> };

/** What a catalog read found: the template (provider fields), `missing` when the catalog has none of that name and language. */
export type CatalogRead = { found: Record<string, unknown> } | { missing: true } | null;

/** Reads the templates of this name and keeps the one of this language. */
export async function readCatalogTemplate(
  deps: CatalogDeps,
  customerId: string,
  accountId: string,
  name: string,
  language: string,
  fields: string,
): Promise<CatalogRead> {
  const credential = await loadManagementCredential(deps.db, customerId, accountId);
  if (!credential) return null;
  let token: string;
  try {
    token = deps.sealer.open(credential.sealedToken, {
      table: 'chat_accounts',
      column: 'management_token_enc',
      id: accountId,
    });
  } catch {
    return null;
  }
  const outcome = await deps.provider.manage({
    method: 'GET',
    path: [credential.wabaId, 'message_templates'],
    query: { name, fields, limit: '100' },
    token,
  });
  if (!outcome.ok) return null;
  const data = (outcome.body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const found = (data as Record<string, unknown>[]).find((t) => t?.name === name && t?.language === language);
  return found ? { found } : { missing: true };
}

/** How long a definition read from the catalog is trusted: a template edited at the provider is seen after this. */
const DEFINITION_TTL_MS = 60_000;
const UNKNOWN_TTL_MS = 15_000;
const MAX_ENTRIES = 10_000;
/** The longest an accept waits for the catalog: past it the send is accepted unchecked (the provider checks it). */
const READ_DEADLINE_MS = 2_000;
const FIELDS = 'name,language,status,category,parameter_format,components';

export type TemplateCatalog = ReturnType<typeof createTemplateCatalog>;

export function createTemplateCatalog(deps: CatalogDeps) {
  const cache = new Map<string, { read: CatalogRead; until: number }>();
  /** One read at a time per template: a burst of sends of one template asks the provider once. */
  const inFlight = new Map<string, Promise<CatalogRead>>();

  function read(k: string, customerId: string, accountId: string, name: string, language: string) {
    let pending = inFlight.get(k);
    if (!pending) {
      pending = readCatalogTemplate(deps, customerId, accountId, name, language, FIELDS)
        .catch(() => null)
        .then((r) => {
          if (cache.size >= MAX_ENTRIES) cache.clear();
          cache.set(k, {
            read: r,
            until: Date.now() + (r !== null && 'found' in r ? DEFINITION_TTL_MS : UNKNOWN_TTL_MS),
          });
          return r;
        })
        .finally(() => inFlight.delete(k));
      inFlight.set(k, pending);
    }
    return pending;
  }

  const catalog = {
    /**
     * The template's definition as the provider holds it, `missing`, or null when the catalog
     * cannot be read: no credential, provider trouble, or no answer within the read deadline (the
     * read goes on and fills the cache for the next send).
     */
    async definition(customerId: string, accountId: string, name: string, language: string): Promise<CatalogRead> {
      const k = `${accountId}\u0000${name}\u0000${language}`;
      const hit = cache.get(k);
      if (hit && hit.until > Date.now()) return hit.read;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), READ_DEADLINE_MS);
      });
      try {
        return await Promise.race([read(k, customerId, accountId, name, language), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    /** The problems of a template send against this catalog (none when it cannot be read). */
    sendProblems: (
      customerId: string,
      accountId: string,
      template: { name: string; language: string },
      variants: TemplateVariant[],
    ): Promise<Problem[]> => templateCatalogProblems(catalog, customerId, accountId, template, variants),
  };
  return catalog;
}
