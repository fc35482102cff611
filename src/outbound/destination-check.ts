// The rules for a customer-supplied destination URL (webhook endpoints, forwarding rules): https,
// no credentials, no private or loopback host in any spelling, nor a name resolving to one.
import { checkOutboundUrl, isBlockedAddress } from './address-guard.js';
import type { Resolve } from './outbound-client.js';

const RESOLVE_TIMEOUT_MS = 3000;

/** The reason a destination is refused, or null. */
export async function checkDestinationUrl(
  url: string,
  opts: { allowPrivate: boolean; resolve: Resolve },
): Promise<string | null> {
  const literal = checkOutboundUrl(url, { allowPrivate: opts.allowPrivate });
  if (literal) return literal;
  if (opts.allowPrivate) return null;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':')) return null; // an IP literal, already checked
  const addresses = await Promise.race([
    opts.resolve(host).catch(() => null),
    new Promise<null>((r) => setTimeout(() => r(null), RESOLVE_TIMEOUT_MS).unref()),
  ]);
  // A name that does not resolve now is accepted: the delivery-time guard checks every connection.
  return addresses?.some((a) => isBlockedAddress(a.address)) ? 'resolves to a private or loopback address' : null;
}
