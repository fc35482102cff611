// A template's category (MARKETING, UTILITY, AUTHENTICATION) as the provider's catalog files it,
// for the dispatcher's suppression check. Cached per process: a category rarely changes, and the
// catalog is read only for a template send to a suppressed number.
import type { Db } from '../db/db.js';
import type { ProviderClient } from '../provider/cloud-api.js';
import type { Sealer } from '../shared/crypto.js';
import { reportedCategory } from './template-status.js';
import { loadManagementCredential } from './template-store.js';

/** How long a category read from the catalog is trusted. */
const CATEGORY_TTL_MS = 10 * 60_000;
/** How long an unknown answer (no credential, provider trouble) is kept before asking again. */
const UNKNOWN_TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

export type TemplateCategories = ReturnType<typeof createTemplateCategories>;

export function createTemplateCategories(deps: { db: Db; sealer: Sealer; provider: Pick<ProviderClient, 'manage'> }) {
  const cache = new Map<string, { category: string | null; until: number }>();

  async function read(customerId: string, accountId: string, name: string, language: string) {
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
      query: { name, fields: 'name,language,category', limit: '100' },
      token,
    });
    if (!outcome.ok) return null;
    const data = (outcome.body as { data?: unknown } | null)?.data;
    const found = (Array.isArray(data) ? data : []).find(
      (t: Record<string, unknown>) => t?.name === name && t?.language === language,
    ) as Record<string, unknown> | undefined;
    return typeof found?.category === 'string' ? found.category.toUpperCase() : null;
  }

  return {
    /**
     * The category, or null when it cannot be known (no management credential, provider trouble).
     * What the provider's template webhooks last reported wins (decision 0015): it is never stale.
     */
    async categoryOf(customerId: string, accountId: string, name: string, language: string): Promise<string | null> {
      const reported = await reportedCategory(deps.db, accountId, name, language);
      if (reported) return reported;
      const k = `${accountId}\u0000${name}\u0000${language}`;
      const hit = cache.get(k);
      if (hit && hit.until > Date.now()) return hit.category;
      const category = await read(customerId, accountId, name, language).catch(() => null);
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(k, { category, until: Date.now() + (category === null ? UNKNOWN_TTL_MS : CATEGORY_TTL_MS) });
      return category;
    },
  };
}
