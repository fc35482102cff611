// A small typed client over fetch: one method per operation of the public API, types generated from
// the service's OpenAPI document (openapi-types.ts), errors as ChatGateError. Calls that are safe
// to repeat (reads, lookups, and sends, which are idempotent by externalId) are retried on network
// errors, timeouts and 5xx answers; the others are sent once.
import { ChatGateError, type ErrorCode } from './errors.js';
import type { components, operations, webhooks } from './openapi-types.js';

type Schemas = components['schemas'];
type JsonBody<K extends keyof operations> = operations[K] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type QueryOf<K extends keyof operations> = NonNullable<operations[K]['parameters']['query']>;
type EventBody<K extends keyof webhooks> = webhooks[K]['post'] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

// `content` as the document types it is one object with every field optional; the service accepts
// exactly one shape per `type` (src/messages/send-request.ts). These are those shapes, so that a
// text message without `text` (or with an `image`) does not compile. Each is checked against the
// generated type below (AssignableTo), so a change to the document that breaks them fails tsc.
type GeneratedContent = JsonBody<'sendMessage'>['content'];
type Media = { url: string; mediaId?: never } | { mediaId: string; url?: never };
export type TextContent = { type: 'text'; text: string };
export type TemplateContent = { type: 'template'; template: NonNullable<GeneratedContent['template']> };
export type ImageContent = { type: 'image'; image: Media; caption?: string };
export type DocumentContent = {
  type: 'document';
  document: Media & { filename?: string };
  caption?: string;
};
export type AudioContent = { type: 'audio'; audio: Media };
export type VideoContent = { type: 'video'; video: Media; caption?: string };
export type StickerContent = { type: 'sticker'; sticker: Media };
export type LocationContent = { type: 'location'; location: NonNullable<GeneratedContent['location']> };
export type ContactsContent = { type: 'contacts'; contacts: NonNullable<GeneratedContent['contacts']> };
type Interactive = NonNullable<GeneratedContent['interactive']>;
type InteractiveCommon = Pick<Interactive, 'body' | 'footer'>;
type MediaHeader<K extends 'image' | 'video' | 'document'> = { type: K } & { [P in K]: Media };
type Header = { type: 'text'; text: string } | MediaHeader<'image'> | MediaHeader<'video'> | MediaHeader<'document'>;
/** Reply buttons, a list (text header only) or a call-to-action URL. */
export type InteractiveContent = {
  type: 'interactive';
  interactive:
    | (InteractiveCommon & { type: 'button'; header?: Header; buttons: NonNullable<Interactive['buttons']> })
    | (InteractiveCommon & {
        type: 'list';
        header?: { type: 'text'; text: string };
        list: NonNullable<Interactive['list']>;
      })
    | (InteractiveCommon & { type: 'cta_url'; header?: Header; ctaUrl: NonNullable<Interactive['ctaUrl']> });
};
/** Names the earlier message one way: ours by messageId or externalId, or an inbound one. */
export type MessageRef =
  | { messageId: string; externalId?: never; inboundMessageId?: never }
  | { externalId: string; messageId?: never; inboundMessageId?: never }
  | { inboundMessageId: string; messageId?: never; externalId?: never };
/** An emoji on an earlier message of the conversation ('' removes it); POST /messages only. */
export type ReactionContent = { type: 'reaction'; reaction: MessageRef & { emoji: string } };
/** What to send: one shape per `type`. */
export type MessageContent =
  | TextContent
  | TemplateContent
  | ImageContent
  | DocumentContent
  | AudioContent
  | VideoContent
  | StickerContent
  | LocationContent
  | ContactsContent
  | InteractiveContent
  | ReactionContent;
type AssignableTo<T extends U, U> = T;
export type SendMessageRequest = AssignableTo<
  Omit<JsonBody<'sendMessage'>, 'content' | 'replyTo'> & { content: MessageContent; replyTo?: MessageRef },
  JsonBody<'sendMessage'>
>;
export type SendBroadcastRequest = AssignableTo<
  Omit<JsonBody<'sendBroadcast'>, 'content'> & { content: Exclude<MessageContent, ReactionContent> },
  JsonBody<'sendBroadcast'>
>;
export type CreateWebhookEndpointRequest = JsonBody<'createWebhookEndpoint'>;
export type UpdateWebhookEndpointRequest = JsonBody<'updateWebhookEndpoint'>;
export type LookupSendersRequest = JsonBody<'lookupSenders'>;
export type CreateTemplateRequest = JsonBody<'createTemplate'>;
export type SetInboxFilterRequest = JsonBody<'setInboxFilter'>;
export type CreateForwardingRuleRequest = JsonBody<'createForwardingRule'>;
export type UpdateForwardingRuleRequest = JsonBody<'updateForwardingRule'>;
export type AddSuppressionRequest = JsonBody<'addSuppression'>;
export type SetOptOutKeywordsRequest = JsonBody<'setOptOutKeywords'>;
export type ListMessagesQuery = QueryOf<'listMessages'>;
export type ListBroadcastsQuery = QueryOf<'listBroadcasts'>;
export type ListInboundMessagesQuery = QueryOf<'listInboundMessages'>;
export type ListTemplatesQuery = QueryOf<'listTemplates'>;
export type ListSuppressionsQuery = QueryOf<'listSuppressions'>;
export type GetUsageQuery = QueryOf<'getUsage'>;

export type Message = Schemas['Message'];
export type MessagePage = Schemas['MessagePage'];
export type SendAck = Schemas['SendAck'];
export type BroadcastAck = Schemas['BroadcastAck'];
export type Broadcast = Schemas['Broadcast'];
export type BroadcastPage = Schemas['BroadcastPage'];
export type ChatAccount = Schemas['ChatAccount'];
export type Sender = Schemas['Sender'];
export type InboundMessagePage = Schemas['InboundMessagePage'];
export type InboundMessage = Schemas['InboundMessage'];
export type InboundReadMark = Schemas['InboundReadMark'];
/** An inbound message's file: its bytes and Content-Type. */
export type InboundFile = { data: Uint8Array; contentType: string };
export type InboxFilter = Schemas['InboxFilter'];
export type ForwardingRule = Schemas['ForwardingRule'];
export type Suppression = Schemas['Suppression'];
export type SuppressionPage = Schemas['SuppressionPage'];
export type OptOutKeywords = Schemas['OptOutKeywords'];
export type Usage = Schemas['Usage'];
export type MediaUpload = Schemas['MediaUpload'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type WebhookDeliveryPage = Schemas['WebhookDeliveryPage'];
export type Template = Schemas['Template'];
export type TemplatePage = Schemas['TemplatePage'];
/**
 * The events POSTed to webhook endpoints (check the signature first: verifyWebhookSignature), one
 * per event of the document's `webhooks`: narrow on `type` (`ev.type === 'quota.threshold'`).
 */
export type WebhookEvent = { [K in keyof webhooks]: EventBody<K> }[keyof webhooks];
export type WebhookEventType = WebhookEvent['type'];
/** Every event type, as a value (a receiver's switch, a subscription list). */
export const WEBHOOK_EVENT_TYPES = [
  'message.status',
  'message.inbound',
  'sender.first_inbound',
  'webhook.test',
  'quota.threshold',
  'template.status',
  'account.messaging_limit',
] as const satisfies readonly WebhookEventType[];
// Fails to compile when the document has an event type the list above misses.
type MissingEventTypes = Exclude<WebhookEventType, (typeof WEBHOOK_EVENT_TYPES)[number]>;
const everyEventTypeListed: [MissingEventTypes] extends [never] ? true : MissingEventTypes = true;
void everyEventTypeListed;

/** A send's answer: `created` is false for a repeat (200), which returns the original message. */
export type Sent<T> = T & { created: boolean };

export type ChatGateOptions = {
  /** `ak_live_…` or `ak_test_…`, sent in x-api-key. */
  apiKey: string;
  /** Default http://127.0.0.1:3000. */
  baseUrl?: string;
  /** Retries after the first try of a repeatable call (default 3). */
  retries?: number;
  /** First retry delay in ms, doubled each time, ±20 % jitter (default 200). */
  retryDelayMs?: number;
  /** Per attempt, in ms (default 30,000). */
  timeoutMs?: number;
  /** Another fetch (tests, proxies); default globalThis.fetch. */
  fetch?: typeof fetch;
};

type Query = Record<string, string | number | boolean | undefined>;
type RequestOptions = { query?: Query; body?: unknown; form?: FormData; retry?: boolean; binary?: boolean };

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
const seg = encodeURIComponent;

export class ChatGate {
  readonly #apiKey: string;
  readonly #baseUrl: string;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ChatGateOptions) {
    if (!options.apiKey) throw new TypeError('ChatGate: apiKey is required');
    this.#apiKey = options.apiKey;
    this.#baseUrl = (options.baseUrl ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
    this.#retries = options.retries ?? 3;
    this.#retryDelayMs = options.retryDelayMs ?? 200;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  // Sends: idempotent by externalId, so retried; a retry of a send that did arrive answers 200.

  /** POST /messages. Throws ChatGateError (409 conflict for the same externalId with another payload). */
  async sendMessage(body: SendMessageRequest): Promise<Sent<SendAck>> {
    const { status, body: ack } = await this.#request<SendAck>('POST', '/messages', { body, retry: true });
    return { ...ack, created: status === 201 };
  }

  /** POST /messages/broadcast (plans Basic and Pro; not with a sandbox key). */
  async sendBroadcast(body: SendBroadcastRequest): Promise<Sent<BroadcastAck>> {
    const { status, body: ack } = await this.#request<BroadcastAck>('POST', '/messages/broadcast', {
      body,
      retry: true,
    });
    return { ...ack, created: status === 201 };
  }

  /** POST /media: a file to send later by mediaId (at most 20 MB; unused uploads expire in 1 hour). */
  async uploadMedia(file: Blob, filename: string): Promise<MediaUpload> {
    const form = new FormData();
    form.append('file', file, filename);
    return this.#json('POST', '/media', { form });
  }

  // Reads.

  /** GET /messages/{id}: by messageId or by your externalId. */
  getMessage(id: string): Promise<Message> {
    return this.#json('GET', `/messages/${seg(id)}`, { retry: true });
  }

  /** GET /messages: newest first; pass `nextCursor` as `cursor` for the next page. */
  listMessages(query: ListMessagesQuery = {}): Promise<MessagePage> {
    return this.#json('GET', '/messages', { query, retry: true });
  }

  /** Every message matching the query, page after page. */
  async *iterateMessages(query: Omit<ListMessagesQuery, 'cursor'> = {}): AsyncGenerator<Message> {
    let cursor: string | undefined;
    do {
      const page = await this.listMessages({ ...query, cursor });
      yield* page.messages;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * POST /messages/{id}/cancel: a message that has not left yet (pending or queued) ends failed
   * with CANCELLED; 409 when it has left or is being sent. A repeat answers the same record, so retried.
   */
  cancelMessage(id: string): Promise<Message> {
    return this.#json('POST', `/messages/${seg(id)}/cancel`, { retry: true });
  }

  /** GET /chat-accounts. */
  async listChatAccounts(): Promise<ChatAccount[]> {
    return (await this.#json<Schemas['ChatAccountList']>('GET', '/chat-accounts', { retry: true })).accounts;
  }

  /** GET /broadcasts/{id}: by broadcastId or by the broadcast's externalId, with progress counts. */
  getBroadcast(id: string): Promise<Broadcast> {
    return this.#json('GET', `/broadcasts/${seg(id)}`, { retry: true });
  }

  /** GET /broadcasts: newest first. */
  listBroadcasts(query: ListBroadcastsQuery = {}): Promise<BroadcastPage> {
    return this.#json('GET', '/broadcasts', { query, retry: true });
  }

  /** POST /broadcasts/{id}/cancel (cancelling again is harmless, so retried). */
  cancelBroadcast(id: string): Promise<Broadcast> {
    return this.#json('POST', `/broadcasts/${seg(id)}/cancel`, { retry: true });
  }

  // Lookups.

  /** GET /inbound-senders/{phone}: has this number written to the account? */
  getSender(phone: string, options: { chatAccountId?: string } = {}): Promise<Sender> {
    return this.#json('GET', `/inbound-senders/${seg(phone)}`, { query: options, retry: true });
  }

  /** POST /inbound-senders/lookup: up to 200 numbers, one entry per distinct number. */
  async lookupSenders(body: LookupSendersRequest): Promise<Sender[]> {
    return (await this.#json<Schemas['SenderList']>('POST', '/inbound-senders/lookup', { body, retry: true })).senders;
  }

  /** GET /inbound-messages: the inbox (plan Pro), newest first. */
  listInboundMessages(query: ListInboundMessagesQuery = {}): Promise<InboundMessagePage> {
    return this.#json('GET', '/inbound-messages', { query, retry: true });
  }

  /** GET /inbound-messages/{id}: one message of the inbox (plan Pro) with its content by kind, its file's fetch (`media.state`) and `readAt`. */
  getInboundMessage(id: string): Promise<InboundMessage> {
    return this.#json('GET', `/inbound-messages/${seg(id)}`, { retry: true });
  }

  /** GET /inbound-messages/{id}/media: the file (409 media_not_ready while it is fetched, 410 media_unavailable). */
  getInboundMedia(id: string): Promise<InboundFile> {
    return this.#json('GET', `/inbound-messages/${seg(id)}/media`, { retry: true, binary: true });
  }

  /** POST /inbound-messages/{id}/read: blue ticks (and the typing indicator), once per message. */
  markInboundRead(id: string, options: { typing?: boolean } = {}): Promise<InboundReadMark> {
    return this.#json('POST', `/inbound-messages/${seg(id)}/read`, { body: options, retry: true });
  }

  // Webhook endpoints (plans Basic and Pro; not with a key scoped to one account).

  /** POST /webhook-endpoints: the answer's `secret` is shown only here. Sent once (not retried). */
  createWebhookEndpoint(body: CreateWebhookEndpointRequest): Promise<WebhookEndpointWithSecret> {
    return this.#json('POST', '/webhook-endpoints', { body });
  }

  /** GET /webhook-endpoints (no secrets). */
  async listWebhookEndpoints(): Promise<WebhookEndpoint[]> {
    return (await this.#json<Schemas['WebhookEndpointList']>('GET', '/webhook-endpoints', { retry: true }))
      .webhookEndpoints;
  }

  /** GET /webhook-endpoints/{id}. */
  getWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
    return this.#json('GET', `/webhook-endpoints/${seg(id)}`, { retry: true });
  }

  /** PATCH /webhook-endpoints/{id}: any of url, events, description, isActive. */
  updateWebhookEndpoint(id: string, body: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint> {
    return this.#json('PATCH', `/webhook-endpoints/${seg(id)}`, { body, retry: true });
  }

  /** DELETE /webhook-endpoints/{id}, with its delivery history. */
  async deleteWebhookEndpoint(id: string): Promise<void> {
    await this.#request('DELETE', `/webhook-endpoints/${seg(id)}`, {});
  }

  /** POST /webhook-endpoints/{id}/test: queues a webhook.test event to this endpoint. */
  testWebhookEndpoint(id: string): Promise<Schemas['WebhookTestQueued']> {
    return this.#json('POST', `/webhook-endpoints/${seg(id)}/test`, {});
  }

  /** POST /webhook-endpoints/{id}/rotate-secret: the new secret, once; the old one also signs for 24 h. */
  rotateWebhookSecret(id: string): Promise<WebhookEndpointWithSecret> {
    return this.#json('POST', `/webhook-endpoints/${seg(id)}/rotate-secret`, {});
  }

  /** GET /webhook-endpoints/{id}/deliveries: newest first, with every attempt. */
  listWebhookDeliveries(id: string, query: { limit?: number; cursor?: string } = {}): Promise<WebhookDeliveryPage> {
    return this.#json('GET', `/webhook-endpoints/${seg(id)}/deliveries`, { query, retry: true });
  }

  /** POST /webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver: again now, same eventId. */
  redeliverWebhookDelivery(id: string, deliveryId: string): Promise<Schemas['WebhookRedeliveryQueued']> {
    return this.#json('POST', `/webhook-endpoints/${seg(id)}/deliveries/${seg(deliveryId)}/redeliver`, {});
  }

  // Template catalog (Starter and up; key templateAccess read or manage).

  /** GET /chat-accounts/{accountId}/templates, read live from the provider. */
  listTemplates(accountId: string, query: ListTemplatesQuery = {}): Promise<TemplatePage> {
    return this.#json('GET', `/chat-accounts/${seg(accountId)}/templates`, { query, retry: true });
  }

  /** POST /chat-accounts/{accountId}/templates (templateAccess manage). Sent once. */
  createTemplate(accountId: string, body: CreateTemplateRequest): Promise<Template> {
    return this.#json('POST', `/chat-accounts/${seg(accountId)}/templates`, { body });
  }

  // Inbox filter and forwarding rules (plan Pro).

  /** GET /chat-accounts/{accountId}/inbox-filter. */
  getInboxFilter(accountId: string): Promise<InboxFilter> {
    return this.#json('GET', `/chat-accounts/${seg(accountId)}/inbox-filter`, { retry: true });
  }

  /** PUT /chat-accounts/{accountId}/inbox-filter: off, or a whitelist or blacklist of numbers. */
  setInboxFilter(accountId: string, body: SetInboxFilterRequest): Promise<InboxFilter> {
    return this.#json('PUT', `/chat-accounts/${seg(accountId)}/inbox-filter`, { body, retry: true });
  }

  /** POST /forwarding-rules. Sent once (not retried). */
  createForwardingRule(body: CreateForwardingRuleRequest): Promise<ForwardingRule> {
    return this.#json('POST', '/forwarding-rules', { body });
  }

  /** GET /forwarding-rules. */
  async listForwardingRules(): Promise<ForwardingRule[]> {
    return (await this.#json<Schemas['ForwardingRuleList']>('GET', '/forwarding-rules', { retry: true }))
      .forwardingRules;
  }

  /** GET /forwarding-rules/{id}. */
  getForwardingRule(id: string): Promise<ForwardingRule> {
    return this.#json('GET', `/forwarding-rules/${seg(id)}`, { retry: true });
  }

  /** PATCH /forwarding-rules/{id}. */
  updateForwardingRule(id: string, body: UpdateForwardingRuleRequest): Promise<ForwardingRule> {
    return this.#json('PATCH', `/forwarding-rules/${seg(id)}`, { body, retry: true });
  }

  /** DELETE /forwarding-rules/{id}. */
  async deleteForwardingRule(id: string): Promise<void> {
    await this.#request('DELETE', `/forwarding-rules/${seg(id)}`, {});
  }

  // Suppressions and opt-out keywords, per chat account.

  /** GET /chat-accounts/{accountId}/suppressions: newest first. */
  listSuppressions(accountId: string, query: ListSuppressionsQuery = {}): Promise<SuppressionPage> {
    return this.#json('GET', `/chat-accounts/${seg(accountId)}/suppressions`, { query, retry: true });
  }

  /** POST /chat-accounts/{accountId}/suppressions: `created` is false when the number was already on it. */
  async addSuppression(accountId: string, body: AddSuppressionRequest): Promise<Sent<Suppression>> {
    const { status, body: row } = await this.#request<Suppression>(
      'POST',
      `/chat-accounts/${seg(accountId)}/suppressions`,
      { body, retry: true },
    );
    return { ...row, created: status === 201 };
  }

  /** DELETE /chat-accounts/{accountId}/suppressions/{phone}. */
  async removeSuppression(accountId: string, phone: string): Promise<void> {
    await this.#request('DELETE', `/chat-accounts/${seg(accountId)}/suppressions/${seg(phone)}`, {});
  }

  /** GET /chat-accounts/{accountId}/opt-out-keywords. */
  getOptOutKeywords(accountId: string): Promise<OptOutKeywords> {
    return this.#json('GET', `/chat-accounts/${seg(accountId)}/opt-out-keywords`, { retry: true });
  }

  /** PUT /chat-accounts/{accountId}/opt-out-keywords: replaces the list. */
  setOptOutKeywords(accountId: string, body: SetOptOutKeywordsRequest): Promise<OptOutKeywords> {
    return this.#json('PUT', `/chat-accounts/${seg(accountId)}/opt-out-keywords`, { body, retry: true });
  }

  // Usage.

  /** GET /usage: quota use in one UTC month (default this one), by day and by account. */
  getUsage(query: GetUsageQuery = {}): Promise<Usage> {
    return this.#json('GET', '/usage', { query, retry: true });
  }

  async #json<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    return (await this.#request<T>(method, path, options)).body;
  }

  async #request<T>(method: string, path: string, options: RequestOptions): Promise<{ status: number; body: T }> {
    const url = new URL(this.#baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { 'x-api-key': this.#apiKey, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const payload = options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const attempts = options.retry ? this.#retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(url, {
          method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (err) {
        if (attempt < attempts) {
          await this.#pause(attempt);
          continue;
        }
        const timeout = err instanceof DOMException && err.name === 'TimeoutError';
        const message = timeout
          ? `no answer within ${this.#timeoutMs} ms (${method} ${url.origin}${url.pathname})`
          : `${describeCause(err)} (${method} ${url.origin}${url.pathname})`;
        throw new ChatGateError(0, timeout ? 'timeout' : 'network_error', { message }, null, { cause: err });
      }
      if (res.ok && options.binary) {
        const file: InboundFile = {
          data: new Uint8Array(await res.arrayBuffer()),
          contentType: res.headers.get('content-type') ?? 'application/octet-stream',
        };
        return { status: res.status, body: file as T };
      }
      const text = await res.text();
      const body = text === '' ? null : parseJson(text);
      if (res.ok) return { status: res.status, body: body as T };
      if (attempt < attempts && RETRYABLE_STATUS.has(res.status)) {
        await this.#pause(attempt);
        continue;
      }
      const errorBody =
        body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : { message: text };
      const code = typeof errorBody.error === 'string' ? errorBody.error : `http_${res.status}`;
      throw new ChatGateError(res.status, code as ErrorCode, errorBody, res.headers.get('x-request-id'));
    }
  }

  #pause(attempt: number): Promise<void> {
    const ms = this.#retryDelayMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
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
