// Which destinations outbound requests (webhooks, media URLs) may reach: public addresses only.
// URL parsing (WHATWG) already normalises decimal, octal and hex IPv4 spellings to dotted form.
import net from 'node:net';

const blocked = new net.BlockList();
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv6');

/** IPv4 embedded in an IPv4-mapped or -compatible IPv6 address, if any. */
function embeddedIpv4(v6: string): string | null {
  const m = /^(?:0{0,4}:){0,5}(?:ffff:)?((?:\d{1,3}\.){3}\d{1,3})$/i.exec(v6);
  if (m) return m[1]!;
  const hex =
    /^(?:0{0,4}:){0,5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(v6) ??
    /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(v6);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when an IP address is private, loopback, link-local, unique-local or otherwise not public. */
export function isBlockedAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const kind = net.isIP(bare);
  if (kind === 4) return blocked.check(bare, 'ipv4');
  if (kind === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== null && blocked.check(v4, 'ipv4')) return true;
    return blocked.check(bare, 'ipv6');
  }
  return true; // not an address at all: refuse
}

const INTERNAL_NAME = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa)$/i;

/**
 * Checks what can be checked without DNS. Returns the reason a URL is refused, or null.
 * Names are resolved and re-checked on the address actually connected to, at request time.
 */
export function checkOutboundUrl(raw: string, opts: { allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (opts.allowPrivate) return null;
  const host = url.hostname.replace(/\.$/, '');
  if (host === '') return 'has no host';
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    return isBlockedAddress(host) ? 'targets a private or loopback address' : null;
  }
  if (INTERNAL_NAME.test(host) || !host.includes('.')) return 'targets a private or loopback host';
  return null;
}
