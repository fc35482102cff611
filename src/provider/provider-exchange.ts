// One HTTP exchange with the provider, timed in two phases (decision 0061). Before the request
// has a connection (waiting in the pool's queue, connecting) nothing has left this process: a
// failure then is `unsent` and safe to try again. From the moment undici starts writing it on a
// connection (its handler's onRequestStart) the provider may have it: the response deadline starts
// there, and a timeout or a lost connection after it is ambiguous (`sent` true), never "not sent".
import { type Agent, type Dispatcher, type FormData, request } from 'undici';

export type Exchange =
  | { ok: true; status: number; body: unknown; headers: Record<string, string | string[] | undefined> }
  | {
      ok: false;
      transport: 'network' | 'timeout';
      status: number | null;
      /** The request was handed to a connection: the provider may have received it. */
      sent: boolean;
    };

/** What every Graph API call uses: the connection pool, the deadlines, where to call. */
export type ExchangeTransport = {
  agent: Agent;
  /** The response deadline: from the request's first byte on its connection to the end of the answer. */
  timeoutMs: number;
};

/**
 * `startBy` (epoch ms): the latest time the request may get its connection (a send's lease leaves
 * room for its answer only until then); waiting for a pool connection and connecting count
 * against it, not against the response deadline. Absent: `timeoutMs` from now bounds the whole
 * exchange, queueing included (calls that no lease bounds so tightly).
 */
export type ExchangeLimits = { startBy?: number };

const MAX_BODY_BYTES = 256 * 1024;

class PhaseTimeout extends Error {
  constructor(readonly phase: 'start' | 'response') {
    super(phase === 'start' ? 'no provider connection in time' : 'the provider did not answer in time');
    this.name = 'TimeoutError';
  }
}

function transportFailure(err: unknown): 'timeout' | 'network' {
  const name = (err as { name?: string }).name ?? '';
  return name === 'TimeoutError' || name === 'AbortError' || /TIMEOUT/.test((err as { code?: string }).code ?? '')
    ? 'timeout'
    : 'network';
}

async function readJson(body: { text(): Promise<string> }, length: string | string[] | undefined): Promise<unknown> {
  if (Number(length) > MAX_BODY_BYTES) return null;
  const raw = await body.text();
  try {
    return raw.length <= MAX_BODY_BYTES ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

/**
 * The agent as a dispatcher that calls `onStart` when undici starts writing the request on a
 * connection. Every other handler call goes to the request's own handler unchanged.
 */
function watchStart(agent: Agent, onStart: () => void): Dispatcher {
  const dispatch = (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) =>
    agent.dispatch(
      opts,
      new Proxy(handler, {
        get(target, prop) {
          if (prop === 'onRequestStart')
            return (...args: unknown[]) => {
              onStart();
              return (target.onRequestStart as (...a: unknown[]) => unknown).apply(target, args);
            };
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      }),
    );
  // undici's request() only calls `dispatch` on the dispatcher it is given.
  return { dispatch } as unknown as Dispatcher;
}

/** One request with a bearer token: the parsed answer, or a transport failure and whether it left. */
export async function exchangeOnce(
  t: ExchangeTransport,
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body: string | FormData | undefined,
  limits: ExchangeLimits = {},
): Promise<Exchange> {
  const controller = new AbortController();
  let sent = false;
  let responseTimer: NodeJS.Timeout | undefined;
  const abortWith = (phase: 'start' | 'response') => () => controller.abort(new PhaseTimeout(phase));
  // Before the request has a connection: until startBy; without one, the whole exchange's bound.
  const overall = limits.startBy === undefined;
  const startTimer = setTimeout(
    abortWith('start'),
    Math.max(0, (limits.startBy ?? Date.now() + t.timeoutMs) - Date.now()),
  );
  const onStart = () => {
    // Aborted while it waited for its connection (startBy passed): undici aborts it now, before a
    // byte is written, so it stays unsent.
    if (sent || controller.signal.aborted) return;
    sent = true;
    if (overall) return;
    clearTimeout(startTimer);
    responseTimer = setTimeout(abortWith('response'), t.timeoutMs);
  };
  const clear = () => {
    clearTimeout(startTimer);
    clearTimeout(responseTimer);
  };
  let res;
  try {
    res = await request(url, {
      method,
      dispatcher: watchStart(t.agent, onStart),
      headers: {
        authorization: `Bearer ${token}`,
        ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
      },
      body,
      signal: controller.signal,
    });
  } catch (err) {
    clear();
    return { ok: false, transport: transportFailure(err), status: null, sent };
  }
  try {
    return {
      ok: true,
      status: res.statusCode,
      body: await readJson(res.body, res.headers['content-length']),
      headers: res.headers,
    };
  } catch (err) {
    return { ok: false, transport: transportFailure(err), status: res.statusCode, sent: true };
  } finally {
    clear();
  }
}
