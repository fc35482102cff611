// Markets where the provider refuses marketing templates (MARKETING_BLOCKED_MARKETS; issue #25
// item 4, docs/provider-protocol-2026.md "Marketing limits"): each entry is an ISO 3166 region
// (`US`: numbers the phone metadata places there) or a country calling code (`+44`: every number
// under it). A marketing template to such a number fails before any provider call.
import { isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * Empty by default: a default list would fail spec sends the provider may still take (a template's
 * outcome is the spec's), so the operator opts in. The provider documents a pause of marketing
 * templates to US numbers since 2025-04-01: `MARKETING_BLOCKED_MARKETS=US` follows it.
 */
export const DEFAULT_BLOCKED_MARKETS = 'none';

/** The entries of a comma-separated list, or the bad ones as a problem (null when fine). */
export function parseMarkets(raw: string): { markets: string[]; problem: string | null } {
  const items = raw
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '' && x.toLowerCase() !== 'none');
  const bad = items.filter((x) => !(/^\+[1-9]\d{0,2}$/.test(x) || (/^[A-Z]{2}$/.test(x) && isSupportedCountry(x))));
  return {
    markets: items,
    problem: bad.length > 0 ? `not an ISO 3166 region (US) or a calling code (+44): ${bad.join(', ')}` : null,
  };
}

/** The entry of `markets` an E.164 number falls under, or null. */
export function blockedMarketOf(e164: string, markets: readonly string[]): string | null {
  if (markets.length === 0 || !e164.startsWith('+')) return null;
  const parsed = parsePhoneNumberFromString(e164);
  for (const m of markets) {
    if (m.startsWith('+') ? parsed?.countryCallingCode === m.slice(1) : parsed?.country === m) return m;
  }
  return null;
}
