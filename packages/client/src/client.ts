// The customer's client: one method per operation of the public API (an API key in x-api-key),
// types generated from the service's OpenAPI document (openapi-types.ts via types.ts), errors as
// ChatGateError, every list also as an async iterator (iterateX). Calls that are safe to repeat
// (reads, lookups, and sends, which are idempotent by externalId) are retried on network errors,
// timeouts and 5xx answers; the others are sent once. Every method takes RequestOptions last.
import { readEventStream, type StreamedEvent } from './event-stream.js';
import {
  type InboundFile,
  iterateAll,
  paginate,
  type RequestOptions,
  seg,
  Transport,
  type TransportOptions,
} from './transport.js';
import type {
  AddSuppressionRequest,
  Broadcast,
  BroadcastAck,
  BroadcastPage,
  ChatAccount,
  CreateForwardingRuleRequest,
  CreateTemplateRequest,
  CreateWebhookEndpointRequest,
  ForwardingRule,
  GetSenderQuery,
  GetUsageQuery,
  InboundMessage,
  InboundMessagePage,
  InboundReadMark,
  InboxFilter,
  ListBroadcastsQuery,
  ListInboundMessagesQuery,
  ListMessagesQuery,
  ListSuppressionsQuery,
  ListTemplatesQuery,
  ListWebhookDeliveriesQuery,
  LookupSendersRequest,
  MarkInboundReadRequest,
  MediaUpload,
  Message,
  MessagePage,
  OptOutKeywords,
  Schemas,
  SendAck,
  SendBroadcastRequest,
  Sender,
  SendMessageRequest,
  SetInboxFilterRequest,
  SetOptOutKeywordsRequest,
  SignupRequest,
  Suppression,
  SuppressionPage,
  Template,
  TemplatePage,
  UpdateForwardingRuleRequest,
  UpdateWebhookEndpointRequest,
  Usage,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './types.js';

/** A send's answer: `created` is false for a repeat (200), which returns the original message. */
export type Sent<T> = T & { created: boolean };

export type ChatGateOptions = TransportOptions & {
  /** `ak_live_…` or `ak_test_…`, sent in x-api-key. */
  apiKey: string;
};

export class ChatGate {
  readonly #t: Transport;

  constructor(options: ChatGateOptions) {
    if (!options.apiKey) throw new TypeError('ChatGate: apiKey is required');
    this.#t = new Transport({ 'x-api-key': options.apiKey }, options);
  }

  // Sends: idempotent by externalId, so retried; a retry of a send that did arrive answers 200.

  /** POST /messages. Throws ChatGateError (409 conflict for the same externalId with another payload). */
  async sendMessage(body: SendMessageRequest, options: RequestOptions = {}): Promise<Sent<SendAck>> {
    const { status, body: ack } = await this.#t.request<SendAck>('POST', '/messages', { body, retry: true }, options);
    return { ...ack, created: status === 201 };
  }

  /** POST /messages/broadcast (plans Basic and Pro; not with a sandbox key). */
  async sendBroadcast(body: SendBroadcastRequest, options: RequestOptions = {}): Promise<Sent<BroadcastAck>> {
    const { status, body: ack } = await this.#t.request<BroadcastAck>(
      'POST',
      '/messages/broadcast',
      {
        body,
        retry: true,
      },
      options,
    );
    return { ...ack, created: status === 201 };
  }

  /** POST /media: a file to send later by mediaId (at most 20 MB; unused uploads expire in 1 hour). */
  async uploadMedia(file: Blob, filename: string, options: RequestOptions = {}): Promise<MediaUpload> {
    const form = new FormData();
    form.append('file', file, filename);
    return this.#t.json('POST', '/media', { form }, options);
  }

  // Reads.

  /** GET /messages/{id}: by messageId or by your externalId. */
  getMessage(id: string, options: RequestOptions = {}): Promise<Message> {
    return this.#t.json('GET', `/messages/${seg(id)}`, { retry: true }, options);
  }

  /** GET /messages: newest first; pass `nextCursor` as `cursor` for the next page. */
  listMessages(query: ListMessagesQuery = {}, options: RequestOptions = {}): Promise<MessagePage> {
    return this.#t.json('GET', '/messages', { query, retry: true }, options);
  }

  /** Every message matching the query, page after page (`for await (const m of cg.iterateMessages())`). */
  iterateMessages(
    query: Omit<ListMessagesQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Message> {
    return paginate(
      (q, o) => this.listMessages(q, o),
      (p) => p.messages,
      query,
      options,
    );
  }

  /**
   * POST /messages/{id}/cancel: a message that has not left yet (pending or queued) ends failed
   * with CANCELLED; 409 when it has left or is being sent. A repeat answers the same record, so retried.
   */
  cancelMessage(id: string, options: RequestOptions = {}): Promise<Message> {
    return this.#t.json('POST', `/messages/${seg(id)}/cancel`, { retry: true }, options);
  }

  /** GET /chat-accounts. */
  async listChatAccounts(options: RequestOptions = {}): Promise<ChatAccount[]> {
    return (await this.#t.json<Schemas['ChatAccountList']>('GET', '/chat-accounts', { retry: true }, options)).accounts;
  }

  /**
   * POST /chat-accounts/embedded-signup: links your own number with what the provider's Embedded
   * Signup gave your page (the login's code, the session's WABA and number ids) and the PIN. Not
   * retried: a code is good once.
   */
  linkChatAccountBySignup(body: SignupRequest, options: RequestOptions = {}): Promise<ChatAccount> {
    return this.#t.json('POST', '/chat-accounts/embedded-signup', { body, retry: false }, options);
  }

  /** The chat accounts, as an async iterator. */
  iterateChatAccounts(options: RequestOptions = {}): AsyncGenerator<ChatAccount> {
    return iterateAll(this.listChatAccounts(options));
  }

  /** GET /broadcasts/{id}: by broadcastId or by the broadcast's externalId, with progress counts. */
  getBroadcast(id: string, options: RequestOptions = {}): Promise<Broadcast> {
    return this.#t.json('GET', `/broadcasts/${seg(id)}`, { retry: true }, options);
  }

  /** GET /broadcasts: newest first. */
  listBroadcasts(query: ListBroadcastsQuery = {}, options: RequestOptions = {}): Promise<BroadcastPage> {
    return this.#t.json('GET', '/broadcasts', { query, retry: true }, options);
  }

  /** Every broadcast matching the query, page after page. */
  iterateBroadcasts(
    query: Omit<ListBroadcastsQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Broadcast> {
    return paginate(
      (q, o) => this.listBroadcasts(q, o),
      (p) => p.broadcasts,
      query,
      options,
    );
  }

  /** POST /broadcasts/{id}/cancel (cancelling again is harmless, so retried). */
  cancelBroadcast(id: string, options: RequestOptions = {}): Promise<Broadcast> {
    return this.#t.json('POST', `/broadcasts/${seg(id)}/cancel`, { retry: true }, options);
  }

  // Lookups.

  /** GET /inbound-senders/{phone}: has this number written to the account? */
  getSender(phone: string, query: GetSenderQuery = {}, options: RequestOptions = {}): Promise<Sender> {
    return this.#t.json('GET', `/inbound-senders/${seg(phone)}`, { query, retry: true }, options);
  }

  /** POST /inbound-senders/lookup: up to 200 numbers, one entry per distinct number. */
  async lookupSenders(body: LookupSendersRequest, options: RequestOptions = {}): Promise<Sender[]> {
    return (
      await this.#t.json<Schemas['SenderList']>('POST', '/inbound-senders/lookup', { body, retry: true }, options)
    ).senders;
  }

  /** GET /inbound-messages: the inbox (plan Pro), newest first. */
  listInboundMessages(query: ListInboundMessagesQuery = {}, options: RequestOptions = {}): Promise<InboundMessagePage> {
    return this.#t.json('GET', '/inbound-messages', { query, retry: true }, options);
  }

  /** Every inbound message matching the query, page after page. */
  iterateInboundMessages(
    query: Omit<ListInboundMessagesQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<InboundMessagePage['inboundMessages'][number]> {
    return paginate(
      (q, o) => this.listInboundMessages(q, o),
      (p) => p.inboundMessages,
      query,
      options,
    );
  }

  /** GET /inbound-messages/{id}: one message of the inbox (plan Pro) with its content by kind, its file's fetch (`media.state`) and `readAt`. */
  getInboundMessage(id: string, options: RequestOptions = {}): Promise<InboundMessage> {
    return this.#t.json('GET', `/inbound-messages/${seg(id)}`, { retry: true }, options);
  }

  /** GET /inbound-messages/{id}/media: the file (409 media_not_ready while it is fetched, 410 media_unavailable). */
  getInboundMedia(id: string, options: RequestOptions = {}): Promise<InboundFile> {
    return this.#t.json('GET', `/inbound-messages/${seg(id)}/media`, { retry: true, binary: true }, options);
  }

  /** POST /inbound-messages/{id}/read: blue ticks (and the typing indicator), once per message. */
  markInboundRead(
    id: string,
    body: MarkInboundReadRequest = {},
    options: RequestOptions = {},
  ): Promise<InboundReadMark> {
    return this.#t.json('POST', `/inbound-messages/${seg(id)}/read`, { body, retry: true }, options);
  }

  // Webhook endpoints (plans Basic and Pro; not with a key scoped to one account).

  /** POST /webhook-endpoints: the answer's `secret` is shown only here. Sent once (not retried). */
  createWebhookEndpoint(
    body: CreateWebhookEndpointRequest,
    options: RequestOptions = {},
  ): Promise<WebhookEndpointWithSecret> {
    return this.#t.json('POST', '/webhook-endpoints', { body }, options);
  }

  /** GET /webhook-endpoints (no secrets). */
  async listWebhookEndpoints(options: RequestOptions = {}): Promise<WebhookEndpoint[]> {
    return (await this.#t.json<Schemas['WebhookEndpointList']>('GET', '/webhook-endpoints', { retry: true }, options))
      .webhookEndpoints;
  }

  /** The webhook endpoints, as an async iterator. */
  iterateWebhookEndpoints(options: RequestOptions = {}): AsyncGenerator<WebhookEndpoint> {
    return iterateAll(this.listWebhookEndpoints(options));
  }

  /**
   * GET /events/stream: the customer's events as they happen (Server-Sent Events), for development
   * (what `chatgate listen` reads). A live key gets every event (plans Basic and Pro), a sandbox key
   * those of sandbox messages (every plan). `lastEventId` resumes after that event. The stream ends
   * after an hour, or when `options.signal` aborts; `timeoutMs` bounds only the wait for its start.
   */
  async *streamEvents(
    query: { lastEventId?: string } = {},
    options: RequestOptions = {},
  ): AsyncGenerator<StreamedEvent> {
    const headers: Record<string, string> = query.lastEventId ? { 'last-event-id': query.lastEventId } : {};
    yield* readEventStream(await this.#t.stream('/events/stream', headers, options));
  }

  /** GET /webhook-endpoints/{id}. */
  getWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<WebhookEndpoint> {
    return this.#t.json('GET', `/webhook-endpoints/${seg(id)}`, { retry: true }, options);
  }

  /** PATCH /webhook-endpoints/{id}: any of url, events, description, isActive. */
  updateWebhookEndpoint(
    id: string,
    body: UpdateWebhookEndpointRequest,
    options: RequestOptions = {},
  ): Promise<WebhookEndpoint> {
    return this.#t.json('PATCH', `/webhook-endpoints/${seg(id)}`, { body, retry: true }, options);
  }

  /** DELETE /webhook-endpoints/{id}, with its delivery history. */
  async deleteWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', `/webhook-endpoints/${seg(id)}`, {}, options);
  }

  /** POST /webhook-endpoints/{id}/test: queues a webhook.test event to this endpoint. */
  testWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<Schemas['WebhookTestQueued']> {
    return this.#t.json('POST', `/webhook-endpoints/${seg(id)}/test`, {}, options);
  }

  /** POST /webhook-endpoints/{id}/rotate-secret: the new secret, once; the old one also signs for 24 h. */
  rotateWebhookSecret(id: string, options: RequestOptions = {}): Promise<WebhookEndpointWithSecret> {
    return this.#t.json('POST', `/webhook-endpoints/${seg(id)}/rotate-secret`, {}, options);
  }

  /** GET /webhook-endpoints/{id}/deliveries: newest first, with every attempt. */
  listWebhookDeliveries(
    id: string,
    query: ListWebhookDeliveriesQuery = {},
    options: RequestOptions = {},
  ): Promise<WebhookDeliveryPage> {
    return this.#t.json('GET', `/webhook-endpoints/${seg(id)}/deliveries`, { query, retry: true }, options);
  }

  /** Every delivery of the endpoint, page after page. */
  iterateWebhookDeliveries(
    id: string,
    query: Omit<ListWebhookDeliveriesQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<WebhookDeliveryPage['deliveries'][number]> {
    return paginate(
      (q, o) => this.listWebhookDeliveries(id, q, o),
      (p) => p.deliveries,
      query,
      options,
    );
  }

  /** POST /webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver: again now, same eventId. */
  redeliverWebhookDelivery(
    id: string,
    deliveryId: string,
    options: RequestOptions = {},
  ): Promise<Schemas['WebhookRedeliveryQueued']> {
    return this.#t.json('POST', `/webhook-endpoints/${seg(id)}/deliveries/${seg(deliveryId)}/redeliver`, {}, options);
  }

  // Template catalog (Starter and up; key templateAccess read or manage).

  /** GET /chat-accounts/{accountId}/templates, read live from the provider. */
  listTemplates(
    accountId: string,
    query: ListTemplatesQuery = {},
    options: RequestOptions = {},
  ): Promise<TemplatePage> {
    return this.#t.json('GET', `/chat-accounts/${seg(accountId)}/templates`, { query, retry: true }, options);
  }

  /** Every template of the account matching the query, page after page. */
  iterateTemplates(
    accountId: string,
    query: Omit<ListTemplatesQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Template> {
    return paginate(
      (q, o) => this.listTemplates(accountId, q, o),
      (p) => p.templates,
      query,
      options,
    );
  }

  /** POST /chat-accounts/{accountId}/templates (templateAccess manage). Sent once. */
  createTemplate(accountId: string, body: CreateTemplateRequest, options: RequestOptions = {}): Promise<Template> {
    return this.#t.json('POST', `/chat-accounts/${seg(accountId)}/templates`, { body }, options);
  }

  // Inbox filter and forwarding rules (plan Pro).

  /** GET /chat-accounts/{accountId}/inbox-filter. */
  getInboxFilter(accountId: string, options: RequestOptions = {}): Promise<InboxFilter> {
    return this.#t.json('GET', `/chat-accounts/${seg(accountId)}/inbox-filter`, { retry: true }, options);
  }

  /** PUT /chat-accounts/{accountId}/inbox-filter: off, or a whitelist or blacklist of numbers. */
  setInboxFilter(accountId: string, body: SetInboxFilterRequest, options: RequestOptions = {}): Promise<InboxFilter> {
    return this.#t.json('PUT', `/chat-accounts/${seg(accountId)}/inbox-filter`, { body, retry: true }, options);
  }

  /** POST /forwarding-rules. Sent once (not retried). */
  createForwardingRule(body: CreateForwardingRuleRequest, options: RequestOptions = {}): Promise<ForwardingRule> {
    return this.#t.json('POST', '/forwarding-rules', { body }, options);
  }

  /** GET /forwarding-rules. */
  async listForwardingRules(options: RequestOptions = {}): Promise<ForwardingRule[]> {
    return (await this.#t.json<Schemas['ForwardingRuleList']>('GET', '/forwarding-rules', { retry: true }, options))
      .forwardingRules;
  }

  /** The forwarding rules, as an async iterator. */
  iterateForwardingRules(options: RequestOptions = {}): AsyncGenerator<ForwardingRule> {
    return iterateAll(this.listForwardingRules(options));
  }

  /** GET /forwarding-rules/{id}. */
  getForwardingRule(id: string, options: RequestOptions = {}): Promise<ForwardingRule> {
    return this.#t.json('GET', `/forwarding-rules/${seg(id)}`, { retry: true }, options);
  }

  /** PATCH /forwarding-rules/{id}. */
  updateForwardingRule(
    id: string,
    body: UpdateForwardingRuleRequest,
    options: RequestOptions = {},
  ): Promise<ForwardingRule> {
    return this.#t.json('PATCH', `/forwarding-rules/${seg(id)}`, { body, retry: true }, options);
  }

  /** DELETE /forwarding-rules/{id}. */
  async deleteForwardingRule(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', `/forwarding-rules/${seg(id)}`, {}, options);
  }

  // Suppressions and opt-out keywords, per chat account.

  /** GET /chat-accounts/{accountId}/suppressions: newest first. */
  listSuppressions(
    accountId: string,
    query: ListSuppressionsQuery = {},
    options: RequestOptions = {},
  ): Promise<SuppressionPage> {
    return this.#t.json('GET', `/chat-accounts/${seg(accountId)}/suppressions`, { query, retry: true }, options);
  }

  /** Every suppression of the account, page after page. */
  iterateSuppressions(
    accountId: string,
    query: Omit<ListSuppressionsQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Suppression> {
    return paginate(
      (q, o) => this.listSuppressions(accountId, q, o),
      (p) => p.suppressions,
      query,
      options,
    );
  }

  /** POST /chat-accounts/{accountId}/suppressions: `created` is false when the number was already on it. */
  async addSuppression(
    accountId: string,
    body: AddSuppressionRequest,
    options: RequestOptions = {},
  ): Promise<Sent<Suppression>> {
    const { status, body: row } = await this.#t.request<Suppression>(
      'POST',
      `/chat-accounts/${seg(accountId)}/suppressions`,
      { body, retry: true },
      options,
    );
    return { ...row, created: status === 201 };
  }

  /** DELETE /chat-accounts/{accountId}/suppressions/{phone}. */
  async removeSuppression(accountId: string, phone: string, options: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', `/chat-accounts/${seg(accountId)}/suppressions/${seg(phone)}`, {}, options);
  }

  /** GET /chat-accounts/{accountId}/opt-out-keywords. */
  getOptOutKeywords(accountId: string, options: RequestOptions = {}): Promise<OptOutKeywords> {
    return this.#t.json('GET', `/chat-accounts/${seg(accountId)}/opt-out-keywords`, { retry: true }, options);
  }

  /** PUT /chat-accounts/{accountId}/opt-out-keywords: replaces the list. */
  setOptOutKeywords(
    accountId: string,
    body: SetOptOutKeywordsRequest,
    options: RequestOptions = {},
  ): Promise<OptOutKeywords> {
    return this.#t.json('PUT', `/chat-accounts/${seg(accountId)}/opt-out-keywords`, { body, retry: true }, options);
  }

  // Usage.

  /** GET /usage: quota use in one UTC month (default this one), by day and by account. */
  getUsage(query: GetUsageQuery = {}, options: RequestOptions = {}): Promise<Usage> {
    return this.#t.json('GET', '/usage', { query, retry: true }, options);
  }
}
