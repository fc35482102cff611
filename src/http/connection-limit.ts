// At most MAX_CONNECTIONS_PER_ADDRESS open connections from one client address (issue #32): one
// client holding a thousand idle sockets filled MAX_CONNECTIONS, the process-wide cap, and
// /healthz was unreachable for everyone. A connection over its address's share is closed at once,
// unanswered, as Node closes one over MAX_CONNECTIONS: refusing costs nothing, and an answer
// written before the request is read could be lost to a reset anyway.
import net from 'node:net';

import type { Logger } from 'pino';

/** A refusal is logged at most once per this, with the count since the last line. */
const LOG_EVERY_MS = 60_000;

/**
 * The address a client's connections count against: an IPv4 address (an IPv4-mapped IPv6 one
 * included), or an IPv6 address's /64, the block one site or host usually holds (counting each
 * IPv6 address alone would let one host use 2^64 of them).
 */
export function clientAddressKey(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1]!;
  if (!net.isIPv6(bare)) return bare;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, null];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (::a.b.c.d) is two groups; only the first four groups count here.
  const width = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = tail === null ? left : [...left, ...Array<string>(8 - left.length - width).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Counts each address's open connections on `server` and closes at once one beyond `max`. Every
 * address counts, loopback and a reverse proxy's included (decision 0062): behind a proxy, every
 * client arrives from the proxy's address, so the limit must sit above its connection pool (or
 * be off: 0) and the proxy limits each client itself.
 */
export function limitConnectionsPerAddress(server: net.Server, opts: { max: number; log: Logger }): void {
  if (opts.max <= 0) return;
  const open = new Map<string, number>();
  let refused = 0;
  let loggedAt = 0;
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return; // already gone
    const key = clientAddressKey(address);
    const n = open.get(key) ?? 0;
    if (n >= opts.max) {
      socket.destroy();
      refused++;
      const now = Date.now();
      if (now - loggedAt >= LOG_EVERY_MS) {
        opts.log.warn(
          { address: key, max: opts.max, refused },
          'connections refused: the client address already holds MAX_CONNECTIONS_PER_ADDRESS',
        );
        loggedAt = now;
        refused = 0;
      }
      return;
    }
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
}
