// The provider's Cloud API client: sends by phone-number id with the account's bearer token.
// Tokens stay in the Authorization header: never in a URL, a log line or an error we keep.
import { Agent, request } from 'undici';
import type { SendContent } from './payload.js';
import { buildSendPayload } from './payload.js';

export type ProviderErrorDetail = { code: number | null; subcode: number | null; message: string | null; fbtraceId: string | null };

export type SendOutcome =
  | { ok: true; providerMessageId: string }
  | { ok: false; transport: 'network' | 'timeout' | null; httpStatus: number | null; detail: ProviderErrorDetail | null; summary: string };

/** A management API call (templates): the parsed JSON answer, or what went wrong. */
export type ManagementOutcome =
  | { ok: true; body: unknown }
  | {
      ok: false;
      transport: 'network' | 'timeout' | null;
      httpStatus: number | null;
      detail: ProviderErrorDetail | null;
      /** The provider's user-facing title of a template error (e.g. "Content in this language already exists"). */
      userTitle: string | null;
      /** The provider's Retry-After header, as sent. */
      retryAfter: string | null;
    };

export type ManagementRequest = { method: 'GET' | 'POST'; path: string[]; query?: Record<string, string | undefined>; body?: unknown; token: string };

export type ProviderClient = ReturnType<typeof createProviderClient>;

const MAX_ERROR_TEXT = 500;
const MAX_BODY_BYTES = 256 * 1024;

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, MAX_ERROR_TEXT) : null);

/** The Graph error envelope, reduced to what we may keep and show. */
export function parseGraphError(body: unknown): ProviderErrorDetail | null {
  const e = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!e || typeof e !== 'object') return null;
  const details = text((e.error_data as Record<string, unknown> | undefined)?.details);
  const message = text(e.message);
  return {
    code: num(e.code),
    subcode: num(e.error_subcode),
    message: message && details && !message.includes(details) ? `${message}: ${details}`.slice(0, MAX_ERROR_TEXT) : (message ?? details),
    fbtraceId: text(e.fbtrace_id),
  };
}

function transportFailure(err: unknown): 'timeout' | 'network' {
  const name = (err as { name?: string }).name ?? '';
  return name === 'TimeoutError' || name === 'AbortError' || /TIMEOUT/.test((err as { code?: string }).code ?? '') ? 'timeout' : 'network';
}

export function createProviderClient(opts: { baseUrl: string; apiVersion: string; timeoutMs?: number; connections?: number }) {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const agent = new Agent({ connections: opts.connections ?? 512, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

  async function readJson(body: { text(): Promise<string> }, length: string | string[] | undefined): Promise<unknown> {
    if (Number(length) > MAX_BODY_BYTES) return null;
    const raw = await body.text();
    try {
      return raw.length <= MAX_BODY_BYTES ? JSON.parse(raw) : null;
    } catch {
      return null;
    }
  }

  return {
    async send(account: { phoneNumberId: string; accessToken: string }, to: string, content: SendContent, messageId: string): Promise<SendOutcome> {
      const url = `${opts.baseUrl}/${opts.apiVersion}/${encodeURIComponent(account.phoneNumberId)}/messages`;
      let res;
      try {
        res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(buildSendPayload(to, content, messageId)),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        const timeout = transportFailure(err) === 'timeout';
        return { ok: false, transport: timeout ? 'timeout' : 'network', httpStatus: null, detail: null, summary: timeout ? 'provider request timed out' : 'provider unreachable' };
      }
      let body: unknown;
      try {
        body = await readJson(res.body, res.headers['content-length']);
      } catch {
        return { ok: false, transport: 'network', httpStatus: res.statusCode, detail: null, summary: 'provider connection lost while reading the answer' };
      }
      if (res.statusCode >= 200 && res.statusCode < 300) {
        const id = (body as { messages?: { id?: unknown }[] } | null)?.messages?.[0]?.id;
        if (typeof id === 'string' && id !== '') return { ok: true, providerMessageId: id };
        return { ok: false, transport: null, httpStatus: res.statusCode, detail: null, summary: 'provider answered without a message id' };
      }
      const detail = parseGraphError(body);
      return { ok: false, transport: null, httpStatus: res.statusCode, detail, summary: detail?.message ?? `provider answered HTTP ${res.statusCode}` };
    },

    /**
     * One call of the management API (WABA-level, e.g. message_templates) with the account's
     * management token. Path segments are URL-encoded here; undefined query values are left out.
     */
    async manage(req: ManagementRequest): Promise<ManagementOutcome> {
      const url = new URL(`${opts.baseUrl}/${opts.apiVersion}/${req.path.map(encodeURIComponent).join('/')}`);
      for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
      let res;
      try {
        res = await request(url, {
          method: req.method,
          dispatcher: agent,
          headers: { authorization: `Bearer ${req.token}`, ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}) },
          body: req.body !== undefined ? JSON.stringify(req.body) : undefined,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        return { ok: false, transport: transportFailure(err), httpStatus: null, detail: null, userTitle: null, retryAfter: null };
      }
      let body: unknown;
      try {
        body = await readJson(res.body, res.headers['content-length']);
      } catch (err) {
        return { ok: false, transport: transportFailure(err), httpStatus: res.statusCode, detail: null, userTitle: null, retryAfter: null };
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, body };
      const e = (body as { error?: Record<string, unknown> } | null)?.error;
      const retryAfter = res.headers['retry-after'];
      return {
        ok: false,
        transport: null,
        httpStatus: res.statusCode,
        detail: parseGraphError(body),
        userTitle: text(typeof e === 'object' && e !== null ? e.error_user_title : undefined),
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      };
    },

    close: () => agent.close(),
  };
}
