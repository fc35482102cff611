// The provider's Cloud API client: sends, media uploads and phone-number reads by phone-number id
// with the account's bearer token, and management calls (templates) by WABA id with the management token.
// Tokens stay in the Authorization header: never in a URL, a log line or an error we keep.
import { Agent, FormData } from 'undici';

import { type DownloadOutcome, downloadWithToken, trustedMediaUrl } from './media-download.js';
import type { ProviderMediaRef, SendContent } from './payload.js';
import { buildSendPayload, readPayload } from './payload.js';
import { type ThroughputLevel, throughputLevelOf } from './phone-number.js';
import { type Exchange, type ExchangeLimits, exchangeOnce } from './provider-exchange.js';

export type ProviderErrorDetail = {
  code: number | null;
  subcode: number | null;
  message: string | null;
  fbtraceId: string | null;
};

export type SendOutcome =
  | { ok: true; providerMessageId: string }
  | {
      ok: false;
      transport: 'network' | 'timeout' | null;
      httpStatus: number | null;
      detail: ProviderErrorDetail | null;
      summary: string;
      /**
       * A transport failure after the request was handed to a connection: the provider may have
       * received it (decision 0061). Absent or false: it never left this process.
       */
      sent?: boolean;
    };

export type UploadOutcome = { ok: true; providerMediaId: string } | Extract<SendOutcome, { ok: false }>;

/** A phone-number read: accepted (with the number's `throughput.level`, phone-number.ts), or what went wrong. */
export type LookupOutcome =
  { ok: true; throughputLevel?: ThroughputLevel | null } | Extract<SendOutcome, { ok: false }>;

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

export type ManagementRequest = {
  method: 'GET' | 'POST';
  path: string[];
  query?: Record<string, string | undefined>;
  body?: unknown;
  token: string;
};

export type ProviderClient = ReturnType<typeof createProviderClient>;

/** Where a send goes: the provider's /messages, or its Marketing Messages API for MARKETING templates (decision 0038). */
export type ProviderRoute = 'messages' | 'marketing_messages';

export type ProviderOperation = 'send' | 'media_upload' | 'template' | 'phone_lookup' | 'media_download' | 'mark_read';

/** GET /{media-id}: where to download a received file, and what the provider says of it. */
export type MediaInfoOutcome =
  | { ok: true; url: string; mimeType: string | null; sha256: string | null; size: number | null }
  | Extract<SendOutcome, { ok: false }>;

/** What the client reports of its requests (metrics): each request's latency, and each send's outcome. */
export type ProviderObserver = {
  request(operation: ProviderOperation, seconds: number): void;
  /**
   * `accountId`: our chat account's id, when the caller gave it (never the phone number); `kind`:
   * the content type sent.
   */
  sendOutcome(outcome: SendOutcome, accountId: string | undefined, kind: string): void;
};

/** The sending account as the client needs it; `accountId` only labels what the observer reports. */
export type ProviderAccount = { phoneNumberId: string; accessToken: string; accountId?: string };

const MAX_ERROR_TEXT = 500;

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
    message:
      message && details && !message.includes(details)
        ? `${message}: ${details}`.slice(0, MAX_ERROR_TEXT)
        : (message ?? details),
    fbtraceId: text(e.fbtrace_id),
  };
}

type Failure = Extract<SendOutcome, { ok: false }>;

/** What every Graph API call uses: the connection pool, the timeout, the observer, where to call. */
type Transport = {
  agent: Agent;
  timeoutMs: number;
  observe?: ProviderObserver;
  baseUrl: string;
  apiVersion: string;
};

/** One request to the Graph API with a bearer token: the parsed answer, or a transport failure. */
async function exchange(
  t: Transport,
  operation: ProviderOperation,
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body?: string | FormData,
  limits: ExchangeLimits = {},
): Promise<Exchange> {
  const started = performance.now();
  try {
    return await exchangeOnce(t, method, url, token, body, limits);
  } finally {
    t.observe?.request(operation, (performance.now() - started) / 1000);
  }
}

/** A Cloud API call (send, media upload, phone-number read): the 2xx body, or the failure as we keep it. */
async function call(
  t: Transport,
  operation: ProviderOperation,
  method: 'GET' | 'POST',
  path: string,
  accessToken: string,
  body?: string | FormData,
  limits: ExchangeLimits = {},
): Promise<{ ok: true; body: unknown; httpStatus: number } | Failure> {
  const res = await exchange(t, operation, method, `${t.baseUrl}/${t.apiVersion}/${path}`, accessToken, body, limits);
  if (!res.ok)
    return {
      ok: false,
      transport: res.transport,
      httpStatus: res.status,
      detail: null,
      summary: transportSummary(res),
      sent: res.sent,
    };
  if (res.status >= 200 && res.status < 300) return { ok: true, body: res.body, httpStatus: res.status };
  const detail = parseGraphError(res.body);
  return {
    ok: false,
    transport: null,
    httpStatus: res.status,
    detail,
    summary: detail?.message ?? `provider answered HTTP ${res.status}`,
  };
}

function transportSummary(res: Extract<Exchange, { ok: false }>): string {
  if (res.status !== null) return 'provider connection lost while reading the answer';
  if (!res.sent)
    return res.transport === 'timeout'
      ? 'no provider connection in time (not sent)'
      : 'provider unreachable (not sent)';
  return res.transport === 'timeout'
    ? 'the provider did not answer in time (it may have the message)'
    : 'provider connection lost after the request was sent (it may have the message)';
}

function sendAnswer(res: Awaited<ReturnType<typeof call>>): SendOutcome {
  if (!res.ok) return res;
  const id = (res.body as { messages?: { id?: unknown }[] } | null)?.messages?.[0]?.id;
  if (typeof id === 'string' && id !== '') return { ok: true, providerMessageId: id };
  return {
    ok: false,
    transport: null,
    httpStatus: res.httpStatus,
    detail: null,
    summary: 'provider answered without a message id',
  };
}

/** Uploads a file to the account's number (multipart), for sending by provider media id. */
async function uploadMedia(
  t: Transport,
  account: ProviderAccount,
  file: { data: Buffer; mimetype: string; filename: string },
): Promise<UploadOutcome> {
  const form = new FormData();
  form.append('messaging_product', 'whatsapp');
  form.append('type', file.mimetype);
  form.append('file', new Blob([file.data as Uint8Array<ArrayBuffer>], { type: file.mimetype }), file.filename);
  const res = await call(
    t,
    'media_upload',
    'POST',
    `${encodeURIComponent(account.phoneNumberId)}/media`,
    account.accessToken,
    form,
  );
  if (!res.ok) return res;
  const id = (res.body as { id?: unknown } | null)?.id;
  if (typeof id === 'string' && id !== '') return { ok: true, providerMediaId: id };
  return {
    ok: false,
    transport: null,
    httpStatus: res.httpStatus,
    detail: null,
    summary: 'provider answered the upload without a media id',
  };
}

/**
 * One call of the management API (WABA-level, e.g. message_templates) with the account's
 * management token. Path segments are URL-encoded here; undefined query values are left out.
 */
async function manage(t: Transport, req: ManagementRequest): Promise<ManagementOutcome> {
  const url = new URL(`${t.baseUrl}/${t.apiVersion}/${req.path.map(encodeURIComponent).join('/')}`);
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  const res = await exchange(
    t,
    'template',
    req.method,
    url.toString(),
    req.token,
    req.body !== undefined ? JSON.stringify(req.body) : undefined,
  );
  if (!res.ok)
    return {
      ok: false,
      transport: res.transport,
      httpStatus: res.status,
      detail: null,
      userTitle: null,
      retryAfter: null,
    };
  if (res.status >= 200 && res.status < 300) return { ok: true, body: res.body };
  const e = (res.body as { error?: Record<string, unknown> } | null)?.error;
  const retryAfter = res.headers['retry-after'];
  return {
    ok: false,
    transport: null,
    httpStatus: res.status,
    detail: parseGraphError(res.body),
    userTitle: text(typeof e === 'object' && e !== null ? e.error_user_title : undefined),
    retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
  };
}

/** A received file's download URL and facts (GET /{media-id}?phone_number_id=). */
async function mediaInfo(t: Transport, account: ProviderAccount, mediaId: string): Promise<MediaInfoOutcome> {
  const res = await call(
    t,
    'media_download',
    'GET',
    `${encodeURIComponent(mediaId)}?phone_number_id=${encodeURIComponent(account.phoneNumberId)}`,
    account.accessToken,
  );
  if (!res.ok) return res;
  const b = (res.body ?? {}) as Record<string, unknown>;
  if (typeof b.url !== 'string' || !/^https?:\/\//.test(b.url))
    return {
      ok: false,
      transport: null,
      httpStatus: res.httpStatus,
      detail: null,
      summary: 'provider answered without a media URL',
    };
  return {
    ok: true,
    url: b.url,
    mimeType: text(b.mime_type),
    sha256: text(b.sha256),
    size: num(b.file_size),
  };
}

export type ProviderClientOptions = {
  baseUrl: string;
  apiVersion: string;
  /** The response deadline of each request, from its first byte on a connection (decision 0061). */
  timeoutMs?: number;
  /** Connections at most per origin (PROVIDER_CONNECTIONS): requests beyond them wait here, in undici's queue. */
  connections?: number;
  /** TCP and TLS connect (PROVIDER_CONNECT_TIMEOUT_MS): a request that fails there was never sent. */
  connectTimeoutMs?: number;
  observe?: ProviderObserver;
};

export function createProviderClient(opts: ProviderClientOptions) {
  const observe = opts.observe;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  // Bounded per origin: a burst waits here for a connection, not in the provider's accept backlog.
  const agent = new Agent({
    connections: opts.connections ?? 512,
    connectTimeout: opts.connectTimeoutMs ?? 5_000,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    // undici 8 would negotiate HTTP/2 over TLS by default; the connection counts and timeouts here are
    // sized for HTTP/1.1 connections, so keep that until they are measured with h2.
    allowH2: false,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  const t: Transport = { agent, timeoutMs, observe, baseUrl: opts.baseUrl, apiVersion: opts.apiVersion };
  const post = (operation: ProviderOperation, path: string, accessToken: string, body: string | FormData) =>
    call(t, operation, 'POST', path, accessToken, body);

  return {
    async send(
      account: ProviderAccount,
      to: string,
      content: SendContent,
      messageId: string,
      providerMedia?: ProviderMediaRef | null,
      /** The provider's id of the message it replies or reacts to (payload.ts). */
      targetProviderId: string | null = null,
      route: ProviderRoute = 'messages',
      limits: ExchangeLimits = {},
    ): Promise<SendOutcome> {
      // The Marketing Messages API takes the same payload as /messages, on its own path.
      const outcome = sendAnswer(
        await call(
          t,
          'send',
          'POST',
          `${encodeURIComponent(account.phoneNumberId)}/${route}`,
          account.accessToken,
          JSON.stringify(buildSendPayload(to, content, messageId, providerMedia, targetProviderId)),
          limits,
        ),
      );
      observe?.sendOutcome(outcome, account.accountId, content.type);
      return outcome;
    },

    /** Uploads a file to the account's number (multipart), for sending by provider media id. */
    uploadMedia: (account: ProviderAccount, file: { data: Buffer; mimetype: string; filename: string }) =>
      uploadMedia(t, account, file),

    /**
     * Reads the account's phone number (GET /{phone-number-id}) with its access token: a call
     * without side effects whose answer tells whether the provider accepts the token.
     */
    async readPhoneNumber(account: { phoneNumberId: string; accessToken: string }): Promise<LookupOutcome> {
      const res = await call(
        t,
        'phone_lookup',
        'GET',
        `${encodeURIComponent(account.phoneNumberId)}?fields=id,status,throughput`,
        account.accessToken,
      );
      return res.ok ? { ok: true, throughputLevel: throughputLevelOf(res.body) } : res;
    },

    /** One call of the management API (WABA-level) with the account's management token. */
    manage: (req: ManagementRequest) => manage(t, req),

    /** A received file's download URL and facts (GET /{media-id}?phone_number_id=). */
    mediaInfo: (account: ProviderAccount, mediaId: string) => mediaInfo(t, account, mediaId),

    /**
     * Downloads a received file from the URL the provider gave, with the account's token (never
     * following redirects: the token must not travel elsewhere), at most `maxBytes`.
     */
    download: (url: string, accessToken: string, maxBytes: number): Promise<DownloadOutcome> =>
      trustedMediaUrl(url, opts.baseUrl)
        ? downloadWithToken(agent, url, accessToken, maxBytes, timeoutMs, observe)
        : Promise.resolve({
            ok: false,
            reason: 'permanent',
            httpStatus: null,
            summary: 'the provider gave a download URL outside its own hosts: not sent the token',
          }),

    /** Marks a received message read (blue ticks), with the typing indicator when asked. */
    async markRead(account: ProviderAccount, providerMessageId: string, typing: boolean): Promise<LookupOutcome> {
      const res = await post(
        'mark_read',
        `${encodeURIComponent(account.phoneNumberId)}/messages`,
        account.accessToken,
        JSON.stringify(readPayload(providerMessageId, typing)),
      );
      return res.ok ? { ok: true } : res;
    },

    close: () => agent.close(),
  };
}
