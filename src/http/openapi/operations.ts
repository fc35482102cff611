// What the route schemas cannot say, per operation: its operationId, what it answers on success
// (a components.schemas name, or null for no body), the error codes it can answer beyond the
// standard ones (document.ts adds those to every operation) and request examples. Keyed by
// "METHOD /path" as in the document. A route missing here still gets a derived operationId, tags and
// the standard errors; test/meta.test.ts fails until its answers are described here.
import type { ErrorCode } from './error-docs.js';
import { KIND_EXAMPLES } from './kind-examples.js';

export type OperationDoc = {
  operationId: string;
  ok: Record<number, string | null>;
  errors?: ErrorCode[];
  description?: string;
  examples?: Record<string, { summary: string; value: unknown }>;
};

const webhookGate: ErrorCode[] = ['feature_not_available', 'key_scope_insufficient'];
const endpointGate: ErrorCode[] = [...webhookGate, 'webhook_endpoint_not_found'];
const readScope: ErrorCode[] = ['key_scope_violation', 'account_not_found'];
const senderScope: ErrorCode[] = [...readScope, 'chat_account_required'];
const inboxGate: ErrorCode[] = ['feature_not_available', ...senderScope];
const ruleGate: ErrorCode[] = ['feature_not_available', 'key_scope_insufficient', 'forwarding_rule_not_found'];
const templateGate: ErrorCode[] = [
  ...readScope,
  'feature_not_available',
  'template_access_insufficient',
  'template_management_unavailable',
  'provider_rate_limited',
  'provider_unavailable',
  'provider_unreachable',
];
const sendChecks: ErrorCode[] = [
  'key_scope_violation',
  'invalid_chat_account',
  'chat_account_required',
  'invalid_media',
  'conflict',
  'quota_exceeded',
];
const operator: ErrorCode[] = ['not_found'];

const to = { type: 'phone', phoneE164: '+15551234567' };

export const OPERATIONS: Record<string, OperationDoc> = {
  'POST /messages': {
    operationId: 'sendMessage',
    ok: { 201: 'SendAck', 200: 'SendAck' },
    // message_not_found: the message a reply or a reaction names (decision 0032).
    errors: ['templates_not_available', 'message_not_found', ...sendChecks],
    description:
      "Queues one message: `201` for a new `externalId`, `200` with the original for a repeat of the same send (no new message, no quota), `409 conflict` for the same `externalId` with another payload. A `201` only proves the message was queued: its `status` proves delivery. Retrying with the same `externalId` after a network error or a 500 is safe. With `sendAt` (UTC, 60 s to 35 days ahead and before the message expires) the message is accepted and counted now, stays `pending` with `scheduledAt`, and leaves at that time; `sendAt` is part of the payload for idempotency. With `requireReplyWindow: true`, a text, image or document to a number whose 24-hour reply window is closed (see `replyWindowExpiresAt` of the sender) ends `failed` with `REENGAGEMENT_REQUIRED` at once, without a provider call and with its quota given back. Beyond the spec, `content.type` also takes `audio`, `video`, `sticker`, `location`, `contacts`, `interactive` (reply buttons, a list, a call-to-action URL) and `reaction`, each validated at the provider's limits; `replyTo` sends the message as a reply to an earlier one of the same conversation (`404 message_not_found` when it is not the caller's).",
    examples: {
      text: {
        summary: 'A text message',
        value: { externalId: 'order-1042-shipped', to, content: { type: 'text', text: 'Your order has shipped.' } },
      },
      template: {
        summary: 'An approved template with positional body values',
        value: {
          externalId: 'order-1042-reminder',
          to,
          content: {
            type: 'template',
            template: { name: 'order_update', language: 'en_US', components: { body: ['Ada', '1042'] } },
          },
          metadata: { orderId: 1042 },
        },
      },
      image: {
        summary: 'An image by URL, with a caption',
        value: {
          externalId: 'order-1042-photo',
          to,
          content: { type: 'image', image: { url: 'https://example.com/parcel.jpg' }, caption: 'Your parcel' },
        },
      },
      document: {
        summary: 'A document uploaded with POST /media',
        value: {
          externalId: 'order-1042-invoice',
          to,
          content: {
            type: 'document',
            document: { mediaId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', filename: 'invoice-1042.pdf' },
          },
          ttlSeconds: 86400,
        },
      },
      ...KIND_EXAMPLES,
    },
  },
  'GET /messages/{id}': { operationId: 'getMessage', ok: { 200: 'Message' }, errors: ['message_not_found'] },
  'POST /messages/{id}/cancel': {
    operationId: 'cancelMessage',
    ok: { 200: 'Message' },
    errors: ['message_not_found', 'not_cancellable', 'sandbox_not_supported'],
    description:
      'Cancels a message that has not left yet (`pending`, a scheduled one included, or `queued`, a retry wait included): it ends `failed` with `error.code` `CANCELLED` and a `message.status` event, and its quota comes back when it was never tried and was counted this month. `{id}` is the `messageId` or your `externalId`. A repeat answers `200` with the same record. A message already `sent` or later, failed for another reason, or being sent by a worker at this moment answers `409 not_cancellable` with its `status`: a message is never both sent and cancelled. A sandbox key cancels only sandbox messages.',
  },
  'GET /messages': {
    operationId: 'listMessages',
    ok: { 200: 'MessagePage' },
    errors: ['invalid_cursor', ...readScope],
  },
  'GET /chat-accounts': { operationId: 'listChatAccounts', ok: { 200: 'ChatAccountList' } },
  'GET /usage': {
    operationId: 'getUsage',
    ok: { 200: 'Usage' },
    description:
      'Quota use in one UTC month (`month=YYYY-MM`, default the current one): `limit`, `used` and `resetsAt` are the numbers a `429 quota_exceeded` carries; `byDay` and `byAccount` count what was accepted and what reached sent, delivered, read and failed, on the UTC day it happened. Sandbox messages never count. A key scoped to one account sees only that account in `byDay` and `byAccount`, and the whole quota.',
  },
  'POST /media': {
    operationId: 'uploadMedia',
    ok: { 201: 'MediaUpload' },
    errors: ['media_too_large', 'media_pending_limit'],
  },
  'POST /messages/broadcast': {
    operationId: 'sendBroadcast',
    ok: { 201: 'BroadcastAck', 200: 'BroadcastAck' },
    errors: ['sandbox_not_supported', 'feature_not_available', ...sendChecks],
    description:
      'Queues one content to up to 5,000 recipients, each an ordinary message carrying `broadcastId`. Accepted whole or not at all (the quota for every recipient is reserved at once). `200` with the original for a repeat of the same broadcast.',
    examples: {
      text: {
        summary: 'A text to three recipients',
        value: {
          externalId: 'spring-sale-2026',
          name: 'Spring sale',
          content: { type: 'text', text: 'Our spring sale starts today.' },
          recipients: [{ phoneE164: '+15551234567' }, { phoneE164: '+15551234568' }, { phoneE164: '+15551234569' }],
        },
      },
      template: {
        summary: 'A template with per-recipient values',
        value: {
          externalId: 'renewals-2026-06',
          content: {
            type: 'template',
            template: { name: 'renewal_due', language: 'en', components: { body: ['you'] } },
          },
          recipients: [
            { phoneE164: '+15551234567', externalId: 'renewal-ada', components: { body: ['Ada'] } },
            { phoneE164: '+15551234568', externalId: 'renewal-alan', components: { body: ['Alan'] } },
          ],
        },
      },
    },
  },
  'GET /broadcasts': { operationId: 'listBroadcasts', ok: { 200: 'BroadcastPage' }, errors: ['invalid_cursor'] },
  'GET /broadcasts/{id}': { operationId: 'getBroadcast', ok: { 200: 'Broadcast' }, errors: ['broadcast_not_found'] },
  'POST /broadcasts/{id}/cancel': {
    operationId: 'cancelBroadcast',
    ok: { 200: 'Broadcast' },
    errors: ['broadcast_not_found', 'sandbox_not_supported'],
  },
  'GET /inbound-senders/{phone}': { operationId: 'getSender', ok: { 200: 'Sender' }, errors: senderScope },
  'POST /inbound-senders/lookup': {
    operationId: 'lookupSenders',
    ok: { 200: 'SenderList' },
    errors: senderScope,
    examples: {
      lookup: {
        summary: 'Three numbers in any accepted spelling',
        value: { phones: ['+15551234567', '15551234568', '(555) 123-4569'] },
      },
    },
  },
  'GET /inbound-messages': {
    operationId: 'listInboundMessages',
    ok: { 200: 'InboundMessagePage' },
    errors: ['invalid_cursor', ...inboxGate],
  },
  'GET /inbound-messages/{id}': {
    operationId: 'getInboundMessage',
    ok: { 200: 'InboundMessage' },
    errors: ['inbound_message_not_found', ...inboxGate],
  },
  'GET /inbound-messages/{id}/media': {
    operationId: 'getInboundMedia',
    ok: { 200: null },
    errors: [
      'inbound_message_not_found',
      'inbound_media_not_found',
      'media_not_ready',
      'media_unavailable',
      'feature_not_available',
    ],
    description:
      "The file of an inbound message (image, audio or voice note, video, sticker, document), as fetched from the provider: the body is the file's bytes, with its `Content-Type` and `Content-Length`. `409 media_not_ready` while it is being fetched, `410 media_unavailable` when it never will be (see `media.state` on the message).",
  },
  'POST /inbound-messages/{id}/read': {
    operationId: 'markInboundRead',
    ok: { 200: 'InboundReadMark' },
    errors: ['inbound_message_not_found', 'feature_not_available', 'provider_unavailable'],
    description:
      "Marks the inbound message read at the provider (blue ticks); with `typing: true` the user also sees the typing indicator (up to 25 s, or until the reply). Once per message: a repeat answers the first call's `readAt` and `typing` without a provider call. The call takes a slot of the account's pacing, like its sends. A sandbox key gets a simulated answer (`sandbox: true`) and nothing is sent.",
    examples: { typing: { summary: 'Read, and show the typing indicator', value: { typing: true } } },
  },
  'GET /chat-accounts/{accountId}/inbox-filter': {
    operationId: 'getInboxFilter',
    ok: { 200: 'InboxFilter' },
    errors: [...inboxGate, 'sandbox_not_supported'],
  },
  'PUT /chat-accounts/{accountId}/inbox-filter': {
    operationId: 'setInboxFilter',
    ok: { 200: 'InboxFilter' },
    errors: [...inboxGate, 'sandbox_not_supported'],
    examples: {
      whitelist: {
        summary: 'Keep only messages from these numbers',
        value: { mode: 'whitelist', numbers: ['+15551234567', '+15557654321'] },
      },
      off: { summary: 'Keep every message', value: { mode: 'off' } },
    },
  },
  'GET /chat-accounts/{accountId}/suppressions': {
    operationId: 'listSuppressions',
    ok: { 200: 'SuppressionPage' },
    errors: ['invalid_cursor', ...readScope],
  },
  'POST /chat-accounts/{accountId}/suppressions': {
    operationId: 'addSuppression',
    ok: { 201: 'Suppression', 200: 'Suppression' },
    errors: [...readScope, 'sandbox_not_supported'],
    description:
      "Puts a number on the account's suppression list (`201`); a number already listed answers `200` with its entry unchanged. Broadcast messages and MARKETING templates to a listed number fail with `RECIPIENT_OPTED_OUT`, without a provider call and with their quota given back.",
    examples: { add: { summary: 'A number to suppress', value: { phone: '+15551234567', reason: 'Asked by phone' } } },
  },
  'DELETE /chat-accounts/{accountId}/suppressions/{phone}': {
    operationId: 'removeSuppression',
    ok: { 204: null },
    errors: [...readScope, 'suppression_not_found', 'sandbox_not_supported'],
    description: 'Takes a number (any spelling, `+` URL-encoded as `%2B`) off the list, whatever put it there.',
  },
  'GET /chat-accounts/{accountId}/opt-out-keywords': {
    operationId: 'getOptOutKeywords',
    ok: { 200: 'OptOutKeywords' },
    errors: [...readScope, 'sandbox_not_supported'],
  },
  'PUT /chat-accounts/{accountId}/opt-out-keywords': {
    operationId: 'setOptOutKeywords',
    ok: { 200: 'OptOutKeywords' },
    errors: [...readScope, 'sandbox_not_supported'],
    description:
      'Replaces the keywords (default `STOP`, `UNSUBSCRIBE`, `STOPP`, `ARRET`, `BAJA`). An inbound text that is one of them, whole, trimmed and in any case, puts its sender on the list; `[]` turns keywords off.',
    examples: {
      keywords: { summary: 'Your own keywords', value: { keywords: ['STOP', 'UNSUBSCRIBE', 'QUIT'] } },
      off: { summary: 'No keywords', value: { keywords: [] } },
    },
  },
  'POST /forwarding-rules': {
    operationId: 'createForwardingRule',
    ok: { 201: 'ForwardingRule' },
    errors: [...ruleGate, 'account_not_found', 'limit_reached'],
    examples: {
      contains: {
        summary: 'Forward inbound messages that mention an order',
        value: {
          name: 'Orders',
          condition: { type: 'contains', pattern: 'order' },
          destination: { type: 'http', url: 'https://example.com/chatgate/orders' },
        },
      },
    },
  },
  'GET /forwarding-rules': { operationId: 'listForwardingRules', ok: { 200: 'ForwardingRuleList' }, errors: ruleGate },
  'GET /forwarding-rules/{id}': { operationId: 'getForwardingRule', ok: { 200: 'ForwardingRule' }, errors: ruleGate },
  'PATCH /forwarding-rules/{id}': {
    operationId: 'updateForwardingRule',
    ok: { 200: 'ForwardingRule' },
    errors: [...ruleGate, 'account_not_found'],
    examples: {
      pause: { summary: 'Pause a rule', value: { isActive: false } },
      pattern: {
        summary: 'Match a prefix, case-sensitive',
        value: { condition: { type: 'starts_with', pattern: 'ORDER', caseSensitive: true } },
      },
    },
  },
  'DELETE /forwarding-rules/{id}': { operationId: 'deleteForwardingRule', ok: { 204: null }, errors: ruleGate },
  'POST /webhook-endpoints': {
    operationId: 'createWebhookEndpoint',
    ok: { 201: 'WebhookEndpointWithSecret' },
    errors: [...webhookGate, 'invalid_webhook_url', 'limit_reached'],
    description:
      'Registers an HTTPS endpoint (at most 5 active; plans Basic and Pro). The answer carries the signing `secret`, shown only here. `events` defaults to every event type.',
    examples: {
      all: {
        summary: 'Every event type',
        value: { url: 'https://hooks.example.com/chatgate', description: 'Production' },
      },
      status: {
        summary: 'Status changes only',
        value: { url: 'https://hooks.example.com/chatgate/status', events: ['message.status'] },
      },
    },
  },
  'GET /webhook-endpoints': {
    operationId: 'listWebhookEndpoints',
    ok: { 200: 'WebhookEndpointList' },
    errors: webhookGate,
  },
  'GET /webhook-endpoints/{id}': {
    operationId: 'getWebhookEndpoint',
    ok: { 200: 'WebhookEndpoint' },
    errors: endpointGate,
  },
  'PATCH /webhook-endpoints/{id}': {
    operationId: 'updateWebhookEndpoint',
    ok: { 200: 'WebhookEndpoint' },
    errors: [...endpointGate, 'invalid_webhook_url', 'limit_reached'],
    examples: {
      pause: { summary: 'Pause deliveries', value: { isActive: false } },
      events: { summary: 'Change the subscription', value: { events: ['message.status', 'message.inbound'] } },
    },
  },
  'DELETE /webhook-endpoints/{id}': { operationId: 'deleteWebhookEndpoint', ok: { 204: null }, errors: endpointGate },
  'POST /webhook-endpoints/{id}/rotate-secret': {
    operationId: 'rotateWebhookSecret',
    ok: { 200: 'WebhookEndpointWithSecret' },
    errors: endpointGate,
    description:
      'A new secret, returned once. For 24 hours (`previousSecretExpiresAt`) every delivery is signed with both secrets: `x-svc-signature` carries two `v1=` values.',
  },
  'POST /webhook-endpoints/{id}/test': {
    operationId: 'testWebhookEndpoint',
    ok: { 202: 'WebhookTestQueued' },
    errors: endpointGate,
  },
  'GET /webhook-endpoints/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    ok: { 200: 'WebhookDeliveryPage' },
    errors: [...endpointGate, 'invalid_cursor'],
  },
  'POST /webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver': {
    operationId: 'redeliverWebhookDelivery',
    ok: { 202: 'WebhookRedeliveryQueued' },
    errors: [...endpointGate, 'webhook_delivery_not_found'],
  },
  'GET /chat-accounts/{accountId}/templates': {
    operationId: 'listTemplates',
    ok: { 200: 'TemplatePage' },
    errors: [...templateGate, 'invalid_cursor'],
  },
  'POST /chat-accounts/{accountId}/templates': {
    operationId: 'createTemplate',
    ok: { 201: 'Template' },
    errors: [...templateGate, 'sandbox_not_supported', 'template_already_exists', 'template_rejected_by_provider'],
    examples: {
      positional: {
        summary: 'A utility template with one positional value',
        value: {
          name: 'order_shipped',
          language: 'en_US',
          category: 'UTILITY',
          parameterFormat: 'POSITIONAL',
          body: 'Your order {{1}} has shipped.',
          examples: [{ name: '1', text: '1042' }],
        },
      },
    },
  },
  'POST /admin/customers': {
    operationId: 'createCustomer',
    ok: { 201: 'Customer' },
    examples: {
      customer: {
        summary: 'A customer on plan Starter',
        value: { name: 'Acme Ltd', plan: 'starter', defaultCountry: 'US' },
      },
    },
  },
  'GET /admin/customers': {
    operationId: 'listCustomers',
    ok: { 200: 'CustomerPage' },
    errors: ['invalid_cursor'],
  },
  'GET /admin/customers/{id}/usage': {
    operationId: 'getCustomerUsage',
    ok: { 200: 'CustomerUsage' },
    errors: operator,
  },
  'GET /admin/customers/{id}/chat-accounts': {
    operationId: 'listCustomerChatAccounts',
    ok: { 200: 'OperatorChatAccountPage' },
    errors: [...operator, 'invalid_cursor'],
  },
  'GET /admin/customers/{id}': { operationId: 'getCustomer', ok: { 200: 'Customer' }, errors: operator },
  'PATCH /admin/customers/{id}': {
    operationId: 'updateCustomer',
    ok: { 200: 'Customer' },
    errors: operator,
    examples: { plan: { summary: 'Move to plan Pro', value: { plan: 'pro' } } },
  },
  'POST /admin/customers/{id}/chat-accounts': {
    operationId: 'linkChatAccount',
    ok: { 201: 'OperatorChatAccount' },
    errors: [...operator, 'already_exists', 'limit_reached'],
    examples: {
      official: {
        summary: 'An official account (its credentials are checked with the provider)',
        value: {
          type: 'OFFICIAL',
          phoneNumber: '+15551230000',
          displayName: 'Acme Support',
          official: { phoneNumberId: '109876543210', wabaId: '205432109876', accessToken: '<provider access token>' },
        },
      },
    },
  },
  'PATCH /admin/chat-accounts/{id}': {
    operationId: 'updateChatAccount',
    ok: { 200: 'OperatorChatAccount' },
    errors: [...operator, 'already_exists'],
    examples: {
      rename: { summary: 'Rename an account', value: { displayName: 'Acme Sales' } },
      token: {
        summary: 'A new access token',
        value: { official: { accessToken: '<provider access token>' } },
      },
    },
  },
  'POST /admin/customers/{id}/api-keys': {
    operationId: 'createApiKey',
    ok: { 201: 'ApiKey' },
    errors: [...operator, 'limit_reached', 'invalid_chat_account'],
    examples: {
      live: { summary: 'A live key for every account', value: { name: 'Backend' } },
      sandbox: { summary: 'A sandbox key', value: { sandbox: true, name: 'Tests' } },
    },
  },
  'GET /admin/customers/{id}/api-keys': { operationId: 'listApiKeys', ok: { 200: 'ApiKeyList' }, errors: operator },
  'POST /admin/chat-accounts/{id}/inbound': {
    operationId: 'ingestInboundMessage',
    ok: { 202: 'InboundIngested' },
    errors: operator,
    examples: {
      text: {
        summary: 'A text a number sent to the account',
        value: { providerMessageId: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgASGBQzQUI', from: '+15551234567', text: 'Hello' },
      },
    },
  },
  'DELETE /admin/api-keys/{id}': { operationId: 'revokeApiKey', ok: { 204: null }, errors: operator },
  'POST /admin/encryption/rekey': { operationId: 'rekey', ok: { 200: 'RekeyResult' }, errors: ['key_mismatch'] },
  'GET /admin/provider': { operationId: 'getProviderSettings', ok: { 200: 'ProviderSettings' } },
  'POST /admin/customers/{id}/users': {
    operationId: 'createPortalUser',
    ok: { 201: 'PortalUserInvited' },
    errors: [...operator, 'already_exists'],
    examples: { viewer: { summary: 'Invite a viewer', value: { email: 'ops@example.com', role: 'viewer' } } },
  },
  'GET /admin/customers/{id}/users': {
    operationId: 'listPortalUsers',
    ok: { 200: 'PortalUserList' },
    errors: operator,
  },
  'POST /admin/portal-users/{id}/reset-password': {
    operationId: 'resetPortalUserPassword',
    ok: { 200: 'PortalUserInvited' },
    errors: operator,
  },
  'POST /admin/portal-users/{id}/disable': {
    operationId: 'disablePortalUser',
    ok: { 200: 'PortalUser' },
    errors: operator,
  },
};
