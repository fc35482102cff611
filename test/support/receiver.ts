// A webhook receiver for tests: a real node:http server on 127.0.0.1 (port 0) that records every
// request (headers, raw body, time) and every TCP connection, and answers as the test says: a
// status per request (a queue, then a default), a delay, never answering, a redirect Location.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ReceivedRequest = {
  /** 0-based arrival order. */
  index: number;
  method: string;
  /** Path and query string, as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The exact bytes received. */
  rawBody: Buffer;
  /** The body as UTF-8 text. */
  body: string;
  /** Date.now() when the body was complete. */
  at: number;
};

export type Behaviour = {
  /** Default 200. */
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering (overrides the receiver's delay). */
  delayMs?: number;
  /** Never answer (the connection stays open until the client gives up or the receiver closes). */
  hang?: boolean;
  /** Sets the Location header (for redirects). */
  location?: string;
};

type Rule = Behaviour | number;
const asBehaviour = (r: Rule): Behaviour => (typeof r === 'number' ? { status: r } : r);

export type Receiver = {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted (also counts connections that never made an HTTP request). */
  readonly connections: number;
  /** The answer to every request not covered by the queue or a handler. */
  respond(rule: Rule): void;
  /** Answers for the next requests, one each, in order (before the default). */
  enqueue(...rules: Rule[]): void;
  /** Delay before every answer (unless a behaviour sets its own). */
  setDelay(ms: number): void;
  /** The next `n` requests get no answer at all. */
  hangNext(n?: number): void;
  /** The next request gets a redirect to `location`. */
  redirectNext(location: string, status?: number): void;
  /** A function deciding per request (first say; undefined falls through to queue and default). */
  handle(fn: ((req: ReceivedRequest) => Rule | undefined) | null): void;
  /** Requests matching `filter` (all by default), once there are at least `n` of them. */
  waitForRequests(
    n: number,
    opts?: { timeoutMs?: number; filter?: (r: ReceivedRequest) => boolean },
  ): Promise<ReceivedRequest[]>;
  /** Requests grouped by x-svc-event-id. */
  byEventId(): Map<string, ReceivedRequest[]>;
  /** Forgets recorded requests and connections, the queue, the handler, the delay and the default. */
  reset(): void;
  close(): Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const hung = new Set<http.ServerResponse>();
  const waiters = new Set<() => void>();
  let connections = 0;
  let queue: Behaviour[] = [];
  let fallback: Behaviour = { status: 200, body: 'ok' };
  let delayMs = 0;
  let handler: ((req: ReceivedRequest) => Rule | undefined) | null = null;
  let closed = false;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const rec: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody,
        body: rawBody.toString('utf8'),
        at: Date.now(),
      };
      requests.push(rec);
      for (const w of [...waiters]) w();
      const custom = handler?.(rec);
      const b = custom !== undefined ? asBehaviour(custom) : (queue.shift() ?? fallback);
      if (b.hang) {
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return;
      }
      const answer = () => {
        if (res.destroyed) return;
        const headers: Record<string, string> = { 'content-type': 'text/plain', ...(b.headers ?? {}) };
        if (b.location !== undefined) headers.location = b.location;
        res.writeHead(b.status ?? 200, headers);
        res.end(b.body ?? '');
      };
      const wait = b.delayMs ?? delayMs;
      if (wait > 0) setTimeout(answer, wait).unref();
      else answer();
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A TLS hello or other garbage on this plain HTTP port: just drop it (still counted as a connection).
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    respond(rule) {
      fallback = asBehaviour(rule);
    },
    enqueue(...rules) {
      queue.push(...rules.map(asBehaviour));
    },
    setDelay(ms) {
      delayMs = ms;
    },
    hangNext(n = 1) {
      for (let i = 0; i < n; i++) queue.push({ hang: true });
    },
    redirectNext(location, status = 302) {
      queue.push({ status, location, body: '' });
    },
    handle(fn) {
      handler = fn;
    },
    waitForRequests(n, opts = {}) {
      const filter = opts.filter ?? (() => true);
      const timeoutMs = opts.timeoutMs ?? 15_000;
      return new Promise((resolve, reject) => {
        const check = () => {
          const matching = requests.filter(filter);
          if (matching.length < n) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(matching);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: ${requests.filter(filter).length} of ${n} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    byEventId() {
      const map = new Map<string, ReceivedRequest[]>();
      for (const r of requests) {
        const id = String(r.headers['x-svc-event-id'] ?? '');
        map.set(id, [...(map.get(id) ?? []), r]);
      }
      return map;
    },
    reset() {
      requests.length = 0;
      connections = 0;
      queue = [];
      fallback = { status: 200, body: 'ok' };
      delayMs = 0;
      handler = null;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const res of hung) res.destroy();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}
