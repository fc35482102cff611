// The one outbound HTTP client for customer-supplied URLs (webhook endpoints; media URLs later):
// every connection's address is checked after DNS resolution, so a name that resolves (or
// re-resolves: DNS rebinding) to a private or loopback address is refused at connect time.
// Timeout, response size cap, no redirects followed.
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { checkOutboundUrl, isBlockedAddress } from './address-guard.js';

export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(hostname: string) {
    super(`${hostname} resolves to a private or loopback address`);
  }
}

/** A net.connect lookup that resolves through `resolve` and refuses blocked addresses. */
function guardedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (addresses) => {
        const usable = allowPrivate ? addresses : addresses.filter((a) => !isBlockedAddress(a.address));
        if (usable.length === 0 || (!allowPrivate && usable.length !== addresses.length)) {
          callback(new BlockedAddressError(hostname));
          return;
        }
        if (options?.all) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as LookupFunction;
}

export type PostResult = { statusCode: number | null; durationMs: number; body: string; error: string | null };

export type OutboundClient = ReturnType<typeof createOutboundClient>;

export function createOutboundClient(opts: { allowPrivate: boolean; resolve?: Resolve; maxResponseBytes?: number; connections?: number }) {
  const maxBytes = opts.maxResponseBytes ?? 64 * 1024;
  const agent = new Agent({
    connections: opts.connections ?? 64,
    keepAliveTimeout: 10_000,
    connect: { lookup: guardedLookup(opts.resolve ?? systemResolve, opts.allowPrivate), timeout: 10_000 },
  });

  return {
    /** POSTs once. Never throws: transport failures come back in `error`. */
    async post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      // IP literals never reach the lookup: check them (and the scheme) here.
      const refused = checkOutboundUrl(url, { allowPrivate: opts.allowPrivate });
      if (refused) return { statusCode: null, durationMs: 0, body: '', error: `refused: ${refused}` };
      try {
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          if (size < maxBytes) chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size > maxBytes * 4) break; // stop reading a huge answer; its start is enough
        }
        return { statusCode: res.statusCode, durationMs: elapsed(), body: Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'), error: null };
      } catch (err) {
        const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
        const code = e.cause?.code ?? e.code;
        const reason =
          e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code ?? '') ? `timeout after ${timeoutMs} ms`
          : code === 'EBLOCKEDADDRESS' ? (e.cause?.message ?? e.message ?? 'blocked address')
          : code === 'ECONNREFUSED' ? 'connection refused'
          : code === 'ENOTFOUND' ? 'host not found'
          : `request failed: ${code ?? e.message ?? 'unknown error'}`;
        return { statusCode: null, durationMs: elapsed(), body: '', error: reason };
      }
    },
    close: () => agent.close(),
  };
}
