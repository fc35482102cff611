// The one outbound HTTP client for customer-supplied URLs (webhook endpoints, media URLs):
// every connection's address is checked after DNS resolution, so a name that resolves (or
// re-resolves: DNS rebinding) to a private or loopback address is refused at connect time.
// Timeouts and response size caps; webhook POSTs follow no redirect, media GETs follow at most 3,
// each target checked again.
import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';

import { Agent, request } from 'undici';

import { deadline } from '../shared/deadline.js';
import { checkOutboundUrl, isBlockedAddress } from './address-guard.js';

export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(hostname: string) {
    super(`${hostname} resolves to a private or loopback address`);
  }
}

/**
 * A net.connect lookup that resolves through `resolve` and refuses blocked addresses. With
 * `allowPrivate`, it lets them through and notes in `privateNames` whether the name led to one.
 */
function guardedLookup(resolve: Resolve, allowPrivate: boolean, privateNames: Map<string, boolean>): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (addresses) => {
        if (allowPrivate) {
          if (privateNames.size >= MAX_NOTED_NAMES) privateNames.clear();
          privateNames.set(
            hostname,
            addresses.some((a) => isBlockedAddress(a.address)),
          );
        }
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

/** A media download: the bytes, or why not (permanent: retrying cannot help). */
export type FetchResult =
  | { ok: true; data: Buffer; contentType: string | null; url: string }
  | { ok: false; permanent: boolean; reason: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function transportReason(err: unknown, timeoutMs: number): { code: string | undefined; reason: string } {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const reason =
    e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code ?? '')
      ? `timeout after ${timeoutMs} ms`
      : code === 'EBLOCKEDADDRESS'
        ? (e.cause?.message ?? e.message ?? 'blocked address')
        : code === 'ECONNREFUSED'
          ? 'connection refused'
          : code === 'ENOTFOUND'
            ? 'host not found'
            : `request failed: ${code ?? e.message ?? 'unknown error'}`;
  return { code, reason };
}

/**
 * One POST's outcome. `body` (its start) is null when it is not kept: the answer came from a
 * private or loopback address (reachable only with UNSAFE_ALLOW_PRIVATE_URLS=true), whose
 * answers must not reach customers (delivery history): the flag lets the service deliver there,
 * not read what is there.
 */
export type PostResult = { statusCode: number | null; durationMs: number; body: string | null; error: string | null };

const MAX_NOTED_NAMES = 1000;

export type OutboundClient = ReturnType<typeof createOutboundClient>;

export function createOutboundClient(opts: {
  allowPrivate: boolean;
  resolve?: Resolve;
  maxResponseBytes?: number;
  connections?: number;
}) {
  const maxBytes = opts.maxResponseBytes ?? 64 * 1024;
  const privateNames = new Map<string, boolean>();
  /** Whether a URL's host is (an IP literal of) or last resolved to a private or loopback address. */
  const reachedPrivate = (url: string) => {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return net.isIP(host) !== 0 ? isBlockedAddress(host) : (privateNames.get(host) ?? true);
  };
  const agent = new Agent({
    connections: opts.connections ?? 64,
    keepAliveTimeout: 10_000,
    // undici 8 would negotiate HTTP/2 over TLS by default; the connection counts and timeouts here are
    // sized for HTTP/1.1 connections, so keep that until they are measured with h2.
    allowH2: false,
    connect: {
      lookup: guardedLookup(opts.resolve ?? systemResolve, opts.allowPrivate, privateNames),
      timeout: 10_000,
    },
  });

  const ctx: ClientContext = { agent, allowPrivate: opts.allowPrivate, maxBytes, reachedPrivate };

  return {
    post: (url: string, body: string, headers: Record<string, string>, timeoutMs: number) =>
      postOnce(ctx, url, body, headers, timeoutMs),

    /**
     * GETs a media file: only a direct 200 answer counts, after at most `maxRedirects` redirects,
     * each target checked like the first; the body is cut off (and refused) past `maxBytes`.
     * 404 and other 4xx, oversize and refused addresses are permanent; 5xx, 408, 429 and
     * transport failures may pass.
     */
    async fetchMedia(
      url: string,
      limits: { maxBytes: number; timeoutMs: number; maxRedirects: number },
    ): Promise<FetchResult> {
      // One deadline for all hops, cleared at the end (an abort after completion would surface
      // as an unhandled error on a finished body).
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), limits.timeoutMs);
      try {
        return await fetchWithin(ctx, url, limits, deadline.signal);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
}

/** What the client's requests share: its agent (guarded lookups), and what may be read back. */
type ClientContext = {
  agent: Agent;
  allowPrivate: boolean;
  /** The start of a POST's answer kept. */
  maxBytes: number;
  reachedPrivate: (url: string) => boolean;
};

/** POSTs once. Never throws: transport failures come back in `error`. */
async function postOnce(
  ctx: ClientContext,
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostResult> {
  const { agent, maxBytes } = ctx;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // IP literals never reach the lookup: check them (and the scheme) here.
  const refused = checkOutboundUrl(url, { allowPrivate: ctx.allowPrivate });
  if (refused) return { statusCode: null, durationMs: 0, body: null, error: `refused: ${refused}` };
  const limit = deadline(timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers,
      body,
      signal: limit.signal,
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
    return {
      statusCode: res.statusCode,
      durationMs: elapsed(),
      body:
        ctx.allowPrivate && ctx.reachedPrivate(url)
          ? null
          : Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8'),
      error: null,
    };
  } catch (err) {
    return { statusCode: null, durationMs: elapsed(), body: null, error: transportReason(err, timeoutMs).reason };
  } finally {
    limit.clear();
  }
}

async function fetchWithin(
  ctx: ClientContext,
  url: string,
  limits: { maxBytes: number; timeoutMs: number; maxRedirects: number },
  signal: AbortSignal,
): Promise<FetchResult> {
  const { agent } = ctx;
  let current = url;
  for (let hop = 0; ; hop++) {
    const refused = checkOutboundUrl(current, { allowPrivate: ctx.allowPrivate });
    if (refused) return { ok: false, permanent: true, reason: `refused: ${refused}` };
    let res;
    try {
      res = await request(current, {
        method: 'GET',
        dispatcher: agent,
        headers: { accept: '*/*', 'user-agent': 'ChatGate-media-fetch' },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return { ok: false, permanent: false, reason: `timeout after ${limits.timeoutMs} ms` };
      const { code, reason } = transportReason(err, limits.timeoutMs);
      return { ok: false, permanent: code === 'EBLOCKEDADDRESS', reason };
    }
    // A body not read to its end is dropped: errors on it afterwards are of no interest.
    res.body.on('error', () => {});
    if (REDIRECTS.has(res.statusCode)) {
      res.body.destroy();
      const location = res.headers.location;
      if (typeof location !== 'string' || location === '')
        return { ok: false, permanent: true, reason: `HTTP ${res.statusCode} without a Location` };
      if (hop >= limits.maxRedirects)
        return { ok: false, permanent: true, reason: `more than ${limits.maxRedirects} redirects` };
      try {
        current = new URL(location, current).toString();
      } catch {
        return { ok: false, permanent: true, reason: 'redirect to an invalid URL' };
      }
      continue;
    }
    if (res.statusCode !== 200) {
      res.body.destroy();
      const transient = res.statusCode >= 500 || res.statusCode === 408 || res.statusCode === 429;
      return { ok: false, permanent: !transient, reason: `HTTP ${res.statusCode}` };
    }
    const tooLarge = { ok: false, permanent: true, reason: `larger than ${limits.maxBytes} bytes` } as const;
    if (Number(res.headers['content-length']) > limits.maxBytes) {
      res.body.destroy();
      return tooLarge;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > limits.maxBytes) {
          res.body.destroy();
          return tooLarge;
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (signal.aborted) return { ok: false, permanent: false, reason: `timeout after ${limits.timeoutMs} ms` };
      return { ok: false, permanent: false, reason: transportReason(err, limits.timeoutMs).reason };
    }
    const type = res.headers['content-type'];
    return {
      ok: true,
      data: Buffer.concat(chunks),
      contentType: typeof type === 'string' ? type : null,
      url: current,
    };
  }
}
