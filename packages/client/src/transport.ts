// The HTTP part both clients share (ChatGate with an API key, ChatGateOperator with the operator
// token): one request with its deadline, retries of the calls that are safe to repeat, the caller's
// per-request options (signal, timeout, headers), errors as ChatGateError, and paging.
import { ChatGateError, type ErrorCode } from './errors.js';

/** What every client takes besides its credential. */
export type TransportOptions = {
  /** Default http://127.0.0.1:3000. */
  baseUrl?: string;
  /** Retries after the first try of a repeatable call (default 3). */
  retries?: number;
  /** First retry delay in ms, doubled each time, ±20 % jitter (default 200). */
  retryDelayMs?: number;
  /** Per attempt, in ms (default 30,000). */
  timeoutMs?: number;
  /** Headers sent with every request (a proxy's, a tracing header); per-request `headers` win. */
  headers?: Record<string, string>;
  /** Another fetch (tests, proxies); default globalThis.fetch. */
  fetch?: typeof fetch;
};

/** The last argument of every method: this call only. */
export type RequestOptions = {
  /** Aborts the call, its retries and the waits between them: a ChatGateError `aborted` (status 0). */
  signal?: AbortSignal;
  /** Per attempt, in ms, instead of the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Extra headers for this call (they win over the client's; the credential header is the client's). */
  headers?: Record<string, string>;
};

/** An inbound message's file: its bytes and Content-Type. */
export type InboundFile = { data: Uint8Array; contentType: string };

type Query = Record<string, string | number | boolean | null | undefined>;
export type Call = { query?: object; body?: unknown; form?: FormData; retry?: boolean; binary?: boolean };

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);

/** A path segment, encoded. */
export const seg = encodeURIComponent;

export class Transport {
  readonly #auth: Record<string, string>;
  readonly #baseUrl: string;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(auth: Record<string, string>, options: TransportOptions) {
    this.#auth = auth;
    this.#baseUrl = (options.baseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
    this.#retries = options.retries ?? 3;
    this.#retryDelayMs = options.retryDelayMs ?? 200;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#headers = { ...options.headers };
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  async json<T>(method: string, path: string, call: Call, options: RequestOptions = {}): Promise<T> {
    return (await this.request<T>(method, path, call, options)).body;
  }

  async request<T>(
    method: string,
    path: string,
    call: Call,
    options: RequestOptions = {},
  ): Promise<{ status: number; body: T }> {
    const url = new URL(this.#baseUrl + path);
    for (const [k, v] of Object.entries((call.query ?? {}) as Query))
      if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.#headers,
      ...options.headers,
      ...this.#auth,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const payload = call.form ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    const attempts = call.retry ? this.#retries + 1 : 1;
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const where = `(${method} ${url.origin}${url.pathname})`;
    for (let attempt = 1; ; attempt++) {
      throwIfAborted(options.signal, where);
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
      let res: Response;
      let text: string;
      try {
        res = await this.#fetch(url, { method, headers, body: payload, signal });
        if (res.ok && call.binary) {
          const file: InboundFile = {
            data: new Uint8Array(await res.arrayBuffer()),
            contentType: res.headers.get('content-type') ?? 'application/octet-stream',
          };
          return { status: res.status, body: file as T };
        }
        text = await res.text();
      } catch (err) {
        throwIfAborted(options.signal, where);
        if (attempt < attempts) {
          await this.#pause(attempt, options.signal, where);
          continue;
        }
        const timeout = deadline.aborted;
        const message = timeout ? `no answer within ${timeoutMs} ms ${where}` : `${describeCause(err)} ${where}`;
        throw new ChatGateError(0, timeout ? 'timeout' : 'network_error', { message }, null, { cause: err });
      }
      const body = text === '' ? null : parseJson(text);
      if (res.ok) return { status: res.status, body: body as T };
      if (attempt < attempts && RETRYABLE_STATUS.has(res.status)) {
        await this.#pause(attempt, options.signal, where);
        continue;
      }
      const errorBody =
        body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : { message: text };
      const code = typeof errorBody.error === 'string' ? errorBody.error : `http_${res.status}`;
      throw new ChatGateError(res.status, code as ErrorCode, errorBody, res.headers.get('x-request-id'));
    }
  }

  /**
   * A GET whose answer is a stream (text/event-stream): its body, once the head has come within the
   * timeout (which then no longer applies); the caller's signal ends it. An error answer throws.
   */
  async stream(path: string, headers: Record<string, string>, options: RequestOptions = {}) {
    const url = new URL(this.#baseUrl + path);
    const where = `(GET ${url.origin}${url.pathname})`;
    throwIfAborted(options.signal, where);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const head = new AbortController();
    const timer = setTimeout(() => head.abort(), timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, head.signal]) : head.signal;
    let res: Response;
    try {
      res = await this.#fetch(url, {
        headers: { accept: 'text/event-stream', ...this.#headers, ...options.headers, ...headers, ...this.#auth },
        signal,
      });
    } catch (err) {
      throwIfAborted(options.signal, where);
      const timeout = head.signal.aborted;
      const message = timeout ? `no answer within ${timeoutMs} ms ${where}` : `${describeCause(err)} ${where}`;
      throw new ChatGateError(0, timeout ? 'timeout' : 'network_error', { message }, null, { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (res.ok && res.body) return res.body;
    const text = await res.text();
    const body = text === '' ? null : parseJson(text);
    const errorBody = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : { message: text };
    const code = typeof errorBody.error === 'string' ? errorBody.error : `http_${res.status}`;
    throw new ChatGateError(res.status, code as ErrorCode, errorBody, res.headers.get('x-request-id'));
  }

  #pause(attempt: number, signal: AbortSignal | undefined, where: string): Promise<void> {
    const ms = this.#retryDelayMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(aborted(signal!, where));
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * Every item of a cursor-paged list, page after page (`nextCursor` as the next `cursor`). The
 * caller's options apply to each page's request; breaking out of the loop fetches no more pages.
 */
export async function* paginate<Q extends { cursor?: string }, P extends { nextCursor?: string | null }, T>(
  list: (query: Q, options: RequestOptions) => Promise<P>,
  items: (page: P) => readonly T[],
  query: Omit<Q, 'cursor'>,
  options: RequestOptions,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await list({ ...query, cursor } as Q, options);
    yield* items(page);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** The items of a list the API answers whole (no cursor), as an async iterator like the paged ones. */
export async function* iterateAll<T>(list: Promise<readonly T[]>): AsyncGenerator<T, void, undefined> {
  yield* await list;
}

function throwIfAborted(signal: AbortSignal | undefined, where: string): void {
  if (signal?.aborted) throw aborted(signal, where);
}

function aborted(signal: AbortSignal, where: string): ChatGateError {
  return new ChatGateError(0, 'aborted', { message: `the caller aborted the request ${where}` }, null, {
    cause: signal.reason,
  });
}

/** "fetch failed: connect ECONNREFUSED 127.0.0.1:9": the error and its causes, which fetch hides. */
function describeCause(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    const text = e instanceof Error ? e.message : String(e);
    if (text && !parts.includes(text)) parts.push(text);
    if (!(e instanceof Error)) break;
  }
  return parts.join(': ') || 'network error';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
