// A template's category (MARKETING, UTILITY, AUTHENTICATION) as the provider's catalog files it,
// for the dispatcher's suppression check. Cached per process: a category rarely changes, and the
// catalog is read only for a template send to a suppressed number.
import { type CatalogDeps, readCatalogTemplate } from './template-catalog.js';
import { reportedCategory } from './template-status.js';

/** How long a category read from the catalog is trusted. */
const CATEGORY_TTL_MS = 10 * 60_000;
/** How long an unknown answer (no credential, provider trouble) is kept before asking again. */
const UNKNOWN_TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

export type TemplateCategories = ReturnType<typeof createTemplateCategories>;

export function createTemplateCategories(deps: CatalogDeps) {
  const cache = new Map<string, { category: string | null; until: number }>();

  async function read(customerId: string, accountId: string, name: string, language: string) {
    const read = await readCatalogTemplate(deps, customerId, accountId, name, language, 'name,language,category');
    const category = read !== null && 'found' in read ? read.found.category : null;
    return typeof category === 'string' ? category.toUpperCase() : null;
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
