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
  ['::', 96], // IPv4-compatible (deprecated, RFC 4291), with :: and ::1: nothing public lives there
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
  ['100::', 64],
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32) among them
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4 (deprecated, RFC 7526): the relay would reach the embedded IPv4 address
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv6');

/** The 16 bytes of a valid IPv6 address (in any spelling net.isIPv6 accepts, a dotted tail included). */
function ipv6Bytes(v6: string): Uint8Array {
  let text = v6.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === null ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[2 * i] = n >> 8;
    bytes[2 * i + 1] = n & 255;
  });
  return bytes;
}

const startsWith = (bytes: Uint8Array, prefix: number[]) => prefix.every((b, i) => bytes[i] === b);
const ZERO_80 = Array<number>(10).fill(0);
/** Prefixes (of 96 bits) whose last 32 bits are an IPv4 address that a connection actually reaches. */
const EMBEDDING_96 = [
  [...ZERO_80, 0xff, 0xff], // IPv4-mapped ::ffff:0:0/96
  [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0], // IPv4-translated ::ffff:0:0:0/96 (SIIT)
  [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052)
];

/**
 * The IPv4 address an IPv6 address stands for, if any: the mapped, translated and NAT64 forms
 * reach the embedded IPv4 address, so they are judged by it. (The IPv4-compatible ::/96, 6to4
 * 2002::/16 and Teredo 2001::/32 are refused as a whole.)
 */
export function embeddedIpv4(v6: string): string | null {
  const bytes = ipv6Bytes(v6);
  if (!EMBEDDING_96.some((p) => startsWith(bytes, p))) return null;
  return Array.from(bytes.subarray(12)).join('.');
}

/** True when an IP address is private, loopback, link-local, unique-local or otherwise not public. */
export function isBlockedAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const kind = net.isIP(bare);
  if (kind === 4) return blocked.check(bare, 'ipv4');
  if (kind === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4 !== null) return blocked.check(v4, 'ipv4');
    return blocked.check(bare, 'ipv6');
  }
  return true; // not an address at all: refuse
}

const INTERNAL_NAME = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa)$/i;

/**
 * Checks what can be checked without DNS. Returns the reason a URL is refused, or null.
 * Names are resolved and re-checked on the address actually connected to, at request time.
 */
/**
 * Why a host name cannot exist in DNS (RFC 1035: a label is at most 63 characters, the name at
 * most 253), or null; an IP literal is not a name. Such a URL could never be delivered to.
 */
function hostNameProblem(host: string): string | null {
  if (host.startsWith('[') || net.isIP(host) !== 0) return null;
  const long = host.split('.').find((label) => label.length > 63);
  if (long !== undefined)
    return `has a host name part of ${long.length} characters: each part between dots is at most 63 characters`;
  if (host.length > 253) return `has a host name of ${host.length} characters: at most 253`;
  return null;
}

export function checkOutboundUrl(raw: string, opts: { allowPrivate: boolean }): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) return 'must use https';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const host = url.hostname.replace(/\.$/, '');
  const badName = hostNameProblem(host);
  if (badName) return badName;
  if (opts.allowPrivate) return null;
  if (host === '') return 'has no host';
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    return isBlockedAddress(host) ? 'targets a private or loopback address' : null;
  }
  if (INTERNAL_NAME.test(host) || !host.includes('.')) return 'targets a private or loopback host';
  return null;
}
