// The provider's Cloud API client: sends by phone-number id with the account's bearer token.
// Tokens stay in the Authorization header: never in a URL, a log line or an error we keep.
import { Agent, FormData, request } from 'undici';
import type { ProviderMediaRef, SendContent } from './payload.js';
import { buildSendPayload } from './payload.js';

export type ProviderErrorDetail = { code: number | null; subcode: number | null; message: string | null; fbtraceId: string | null };

export type SendOutcome =
  | { ok: true; providerMessageId: string }
  | { ok: false; transport: 'network' | 'timeout' | null; httpStatus: number | null; detail: ProviderErrorDetail | null; summary: string };

export type UploadOutcome = { ok: true; providerMediaId: string } | Extract<SendOutcome, { ok: false }>;

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

  type Failure = Extract<SendOutcome, { ok: false }>;

  /** One POST to the Graph API: the 2xx body, or the failure as we keep it. */
  async function post(path: string, accessToken: string, body: string | FormData, signal?: AbortSignal): Promise<{ ok: true; body: unknown; httpStatus: number } | Failure> {
    let res;
    try {
      res = await request(`${opts.baseUrl}/${opts.apiVersion}/${path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${accessToken}`, ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}) },
        body,
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const name = (err as { name?: string; code?: string }).name ?? '';
      const timeout = name === 'TimeoutError' || name === 'AbortError' || /TIMEOUT/.test((err as { code?: string }).code ?? '');
      return { ok: false, transport: timeout ? 'timeout' : 'network', httpStatus: null, detail: null, summary: timeout ? 'provider request timed out' : 'provider unreachable' };
    }
    let answer: unknown;
    try {
      answer = await readJson(res.body, res.headers['content-length']);
    } catch {
      return { ok: false, transport: 'network', httpStatus: res.statusCode, detail: null, summary: 'provider connection lost while reading the answer' };
    }
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, body: answer, httpStatus: res.statusCode };
    const detail = parseGraphError(answer);
    return { ok: false, transport: null, httpStatus: res.statusCode, detail, summary: detail?.message ?? `provider answered HTTP ${res.statusCode}` };
  }

  return {
    async send(
      account: { phoneNumberId: string; accessToken: string },
      to: string,
      content: SendContent,
      messageId: string,
      providerMedia?: ProviderMediaRef | null,
    ): Promise<SendOutcome> {
      const res = await post(`${encodeURIComponent(account.phoneNumberId)}/messages`, account.accessToken, JSON.stringify(buildSendPayload(to, content, messageId, providerMedia)));
      if (!res.ok) return res;
      const id = (res.body as { messages?: { id?: unknown }[] } | null)?.messages?.[0]?.id;
      if (typeof id === 'string' && id !== '') return { ok: true, providerMessageId: id };
      return { ok: false, transport: null, httpStatus: res.httpStatus, detail: null, summary: 'provider answered without a message id' };
    },

    /** Uploads a file to the account's number (multipart), for sending by provider media id. */
    async uploadMedia(
      account: { phoneNumberId: string; accessToken: string },
      file: { data: Buffer; mimetype: string; filename: string },
      signal?: AbortSignal,
    ): Promise<UploadOutcome> {
      const form = new FormData();
      form.append('messaging_product', 'whatsapp');
      form.append('type', file.mimetype);
      form.append('file', new Blob([new Uint8Array(file.data)], { type: file.mimetype }), file.filename);
      const res = await post(`${encodeURIComponent(account.phoneNumberId)}/media`, account.accessToken, form, signal);
      if (!res.ok) return res;
      const id = (res.body as { id?: unknown } | null)?.id;
      if (typeof id === 'string' && id !== '') return { ok: true, providerMediaId: id };
      return { ok: false, transport: null, httpStatus: res.httpStatus, detail: null, summary: 'provider answered the upload without a media id' };
    },

    close: () => agent.close(),
  };
}
