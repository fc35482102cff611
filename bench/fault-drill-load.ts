// The fault drill's load: an open-loop generator that offers POST /messages at a steady rate
// whatever the service does (a closed loop would slow down with the service and hide a hang), at
// most `concurrency` requests open at once (a request that would pass that is counted as not
// offered), each with a client timeout, each message with a unique externalId. Every request is
// kept (start, time to answer, status or error, error code, message id) for the drill to cut into
// scenario windows.
import { Agent, request } from 'undici';

export type Outcome =
  | { kind: 'answered'; status: number; code: string | null; id: string | null }
  /** No answer within the client timeout. */
  | { kind: 'timeout' }
  /** The connection was refused, reset or closed before an answer. */
  | { kind: 'connection'; code: string };

export type RequestRecord = { start: number; ms: number | null; outcome: Outcome | null };

export type LoadOptions = {
  url: string;
  /** API keys taken in turn (one customer each: a plan's monthly quota is smaller than a long drill). */
  keys: string[];
  ratePerSec: number;
  concurrency: number;
  timeoutMs: number;
  prefix: string;
};

/** The error code of an answer: `error` (and `reason`, for database_unavailable) of a JSON body. */
function codeOf(status: number, text: string): string | null {
  if (status < 400) return null;
  try {
    const body = JSON.parse(text) as { error?: unknown; reason?: unknown };
    const error = typeof body.error === 'string' ? body.error : 'no code';
    return typeof body.reason === 'string' ? `${error}/${body.reason}` : error;
  } catch {
    return 'not JSON';
  }
}

function idOf(status: number, text: string): string | null {
  if (status < 200 || status >= 300) return null;
  try {
    return ((JSON.parse(text) as { messageId?: unknown }).messageId as string | undefined) ?? null;
  } catch {
    return null;
  }
}

export function startLoad(opts: LoadOptions) {
  const agent = new Agent({
    connections: opts.concurrency,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connectTimeout: opts.timeoutMs,
    keepAliveTimeout: 30_000,
  });
  const records: RequestRecord[] = [];
  const open = new Set<Promise<void>>();
  /** When the generator did not make a request because `concurrency` were open. */
  const notOffered: number[] = [];
  let n = 0;
  let running = true;

  const post = (record: RequestRecord) => {
    const i = n++;
    const body = JSON.stringify({
      externalId: `${opts.prefix}-${i}`,
      to: { type: 'phone', phoneE164: '+15551234567' },
      content: { type: 'text', text: 'fault drill' },
    });
    const done = (async () => {
      try {
        const res = await request(`${opts.url}/messages`, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'x-api-key': opts.keys[i % opts.keys.length]! },
          body,
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
        const text = await res.body.text();
        record.outcome = {
          kind: 'answered',
          status: res.statusCode,
          code: codeOf(res.statusCode, text),
          id: idOf(res.statusCode, text),
        };
      } catch (err) {
        const e = err as { name?: string; code?: string };
        const timedOut =
          e.name === 'TimeoutError' ||
          e.name === 'AbortError' ||
          e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
          e.code === 'UND_ERR_BODY_TIMEOUT' ||
          e.code === 'UND_ERR_ABORTED';
        record.outcome = timedOut ? { kind: 'timeout' } : { kind: 'connection', code: e.code ?? e.name ?? 'error' };
      }
      record.ms = Date.now() - record.start;
    })();
    open.add(done);
    void done.finally(() => open.delete(done));
  };

  // Catches up after a late timer so that the offered rate holds on a loaded machine.
  const startedAt = Date.now();
  let offered = 0;
  const timer = setInterval(() => {
    if (!running) return;
    const due = Math.floor(((Date.now() - startedAt) * opts.ratePerSec) / 1000);
    for (; offered < due; offered++) {
      const record: RequestRecord = { start: Date.now(), ms: null, outcome: null };
      if (open.size >= opts.concurrency) {
        notOffered.push(record.start);
        continue;
      }
      records.push(record);
      post(record);
    }
  }, 5);

  return {
    records,
    /** Requests open now. */
    open: () => open.size,
    notOffered,
    /** Stops offering; waits for the open requests (each ends by its timeout at the latest). */
    async stop() {
      running = false;
      clearInterval(timer);
      await Promise.all([...open]);
      await agent.close();
    },
  };
}
