// The provider's messaging-limit tiers (docs/provider-protocol-2026.md, "Messaging limits"): how
// many unique recipients a business portfolio may start conversations with in a moving 24 hours.
// Pure: the names the provider writes, their limits, and the reverse.

/** The rolling window the provider counts over. */
export const MESSAGING_LIMIT_WINDOW_HOURS = 24;
/** A new portfolio's limit, until the provider or the operator says otherwise. */
export const DEFAULT_MESSAGING_LIMIT = 250;
/** Thresholds (percent of the limit) at which an account.messaging_limit event is written. */
export const ALERT_LEVELS = [80, 100] as const;

/** The tier names of phone_number_quality_update (null: unlimited). */
const TIER_LIMITS: Record<string, number | null> = {
  TIER_50: 50,
  TIER_250: 250,
  TIER_1K: 1000,
  TIER_2K: 2000,
  TIER_10K: 10_000,
  TIER_100K: 100_000,
  TIER_UNLIMITED: null,
};

/** A limit named by the provider: a tier name (`TIER_2K`) or a number (`2000`, `-1` unlimited). Undefined: not a limit. */
export function limitOfTier(value: unknown): number | null | undefined {
  if (typeof value === 'number' || (typeof value === 'string' && /^-?\d{1,9}$/.test(value))) {
    const n = Number(value);
    if (n === -1) return null;
    return Number.isInteger(n) && n > 0 ? n : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const tier = value.trim().toUpperCase();
  return tier in TIER_LIMITS ? TIER_LIMITS[tier] : undefined;
}

/** The tier name of a limit (null when it is not one of the provider's, e.g. an operator's own cap). */
export function tierOfLimit(limit: number | null): string | null {
  if (limit === null) return 'TIER_UNLIMITED';
  return Object.entries(TIER_LIMITS).find(([, n]) => n === limit)?.[0] ?? null;
}

/** The highest alert level `used` of `limit` reaches (0: under 80 %). */
export function alertLevelOf(used: number, limit: number | null): number {
  if (limit === null) return 0;
  let level = 0;
  for (const l of ALERT_LEVELS) if (used * 100 >= l * limit) level = l;
  return level;
}

/** A portfolio's key: the operator's portfolio id, or the account alone. */
export const portfolioKeyOf = (accountId: string, portfolioId: string | null) =>
  portfolioId === null ? `a:${accountId}` : `p:${portfolioId}`;
/** The SQL of the same key over chat_accounts (alias a). */
export const PORTFOLIO_KEY_SQL = `CASE WHEN a.portfolio_id IS NULL THEN 'a:' || a.id::text ELSE 'p:' || a.portfolio_id END`;
