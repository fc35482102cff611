// The events ChatGate POSTs to webhook endpoints, as the OpenAPI 3.1 `webhooks` section: one entry
// per event type, with the envelope, its data and the x-svc- headers exactly as the spec names them.
import { MESSAGE_STATUSES } from '../../shared/vocab.js';
import { inboundContentProps } from '../schemas/inbound-content.js';
import { asPublished } from './route-docs.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const time = { type: 'string', format: 'date-time' };
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });

function envelope(type: string, data: Record<string, unknown>, description: string) {
  return {
    type: 'object',
    description,
    required: ['eventId', 'type', 'createdAt', 'data'],
    properties: {
      eventId: {
        type: 'string',
        pattern: '^evt_',
        description: '`evt_<uuid>`; unchanged across retries: deduplicate on it.',
      },
      type: { type: 'string', const: type },
      createdAt: time,
      data,
    },
    additionalProperties: true,
  };
}

/** The content by kind (decision 0033), the same fields as InboundMessage's (its components by reference). */
const INBOUND_CONTENT = asPublished(inboundContentProps) as Record<string, unknown>;

const obj = (required: string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required,
  properties,
  additionalProperties: true,
});

export const eventSchemas: Record<string, Record<string, unknown>> = {
  MessageStatusEvent: envelope(
    'message.status',
    obj(
      [
        'messageId',
        'externalId',
        'status',
        'previousStatus',
        'channel',
        'recipient',
        'chatAccountId',
        'timestamp',
        'error',
      ],
      {
        messageId: { type: 'string', format: 'uuid' },
        externalId: { type: 'string' },
        status: { type: 'string', enum: ['sent', 'delivered', 'read', 'failed'] },
        previousStatus: { type: 'string', enum: [...MESSAGE_STATUSES] },
        channel: { type: 'string' },
        recipient: {
          type: 'string',
          description: 'E.164, or the business-scoped user id when a send by user id had no known number.',
        },
        recipientUserId: {
          type: 'string',
          description: 'Only on a send by user id: the business-scoped user id it addressed. Addition.',
        },
        chatAccountId: { type: 'string', format: 'uuid' },
        timestamp: {
          ...time,
          description: 'When the transition happened (provider time when available); reorder by it.',
        },
        error: nullable(
          obj(['code', 'message'], {
            code: { type: 'string' },
            message: { type: 'string' },
            provider: { type: 'object', additionalProperties: true, description: 'code, subcode, message, fbtraceId' },
          }),
        ),
      },
    ),
    'A message moved to sent, delivered, read or failed (never queued; nothing on purge).',
  ),
  MessageInboundEvent: envelope(
    'message.inbound',
    obj(
      [
        'inboundMessageId',
        'chatAccountId',
        'channel',
        'from',
        'fromUserId',
        'fromDisplayName',
        'messageType',
        'text',
        'receivedAt',
      ],
      {
        inboundMessageId: { type: 'string' },
        chatAccountId: { type: 'string', format: 'uuid' },
        channel: { type: 'string' },
        from: nullable({ type: 'string', description: 'E.164; null when the platform hides the number.' }),
        fromUserId: nullable({
          type: 'string',
          description: "The provider's business-scoped user id of the sender; null when it gave none.",
        }),
        fromDisplayName: { type: 'string' },
        messageType: {
          type: 'string',
          description:
            'text, image, video, audio, voice_note, document, sticker, reaction, location, contact, and others',
        },
        text: nullable({ type: 'string' }),
        receivedAt: time,
        replyTo: { ...ref('ReplyTo'), description: 'Only when the user replied to a message.' },
        ...INBOUND_CONTENT,
      },
    ),
    'A message arrived to one of your accounts (both channels).',
  ),
  SenderFirstInboundEvent: envelope(
    'sender.first_inbound',
    obj(['chatAccountId', 'channel', 'from', 'fromDisplayName', 'firstInboundAt', 'inboundMessageId'], {
      chatAccountId: { type: 'string', format: 'uuid' },
      channel: { type: 'string' },
      from: { type: 'string', description: 'E.164' },
      fromDisplayName: { type: 'string' },
      firstInboundAt: time,
      inboundMessageId: nullable({ type: 'string' }),
      referral: {
        ...ref('InboundReferral'),
        description: 'Only when the first message came from a click-to-chat ad or post (kept on the sender).',
      },
    }),
    'A number wrote to an account for the first time (once per number and account).',
  ),
  QuotaThresholdEvent: envelope(
    'quota.threshold',
    obj(['threshold', 'limit', 'used', 'resetsAt'], {
      threshold: { type: 'integer', enum: [80, 100], description: 'Percent of `limit` that `used` reached.' },
      limit: { type: 'integer', description: "The plan's monthly limit." },
      used: { type: 'integer', description: 'The quota counter after the send that reached the threshold.' },
      resetsAt: { ...time, description: 'When the quota renews: the first instant of the next UTC month.' },
    }),
    'Your monthly quota use reached 80 % or 100 % of the limit: once per threshold and UTC month (beyond the spec).',
  ),
  AccountMessagingLimitEvent: envelope(
    'account.messaging_limit',
    obj(['chatAccountIds', 'portfolioId', 'thresholdPercent', 'used', 'limit', 'tier', 'source', 'windowHours'], {
      chatAccountIds: {
        type: 'array',
        items: { type: 'string', format: 'uuid' },
        description: 'Your chat accounts that share the limit (one business portfolio).',
      },
      portfolioId: nullable({
        type: 'string',
        description: 'The portfolio as the operator named it; null: the account alone.',
      }),
      thresholdPercent: { type: 'integer', enum: [80, 100], description: 'Percent of `limit` that `used` reached.' },
      used: {
        type: 'integer',
        description: 'Unique recipients the portfolio started conversations with in the last `windowHours`.',
      },
      limit: { type: 'integer', description: "The portfolio's messaging limit." },
      tier: nullable({ type: 'string', description: "The provider's tier name of `limit` (TIER_250, TIER_2K …)." }),
      source: {
        type: 'string',
        enum: ['default', 'provider', 'operator'],
        description:
          'Who set `limit`. `default`: the assumed 250, counted and alerted but not enforced until the provider or the operator sets a limit.',
      },
      windowHours: { type: 'integer', description: 'The moving window the provider counts over (24).' },
    }),
    "The business portfolio of your accounts started conversations (business-initiated sends: templates to recipients whose reply window is closed) with 80 % or 100 % of its messaging limit's unique recipients in a moving 24 hours: once per crossing (again only after its use fell below the threshold). At 100 % further business-initiated sends fail with PORTFOLIO_LIMIT_REACHED without a provider call (beyond the spec).",
  ),
  TemplateStatusEvent: envelope(
    'template.status',
    obj(
      [
        'chatAccountId',
        'templateId',
        'name',
        'language',
        'status',
        'previousStatus',
        'category',
        'qualityScore',
        'reason',
        'timestamp',
      ],
      {
        chatAccountId: { type: 'string', format: 'uuid' },
        templateId: { type: 'string', description: "The provider's template id." },
        name: { type: 'string' },
        language: { type: 'string' },
        status: nullable({
          type: 'string',
          description:
            "The provider's status: APPROVED, PENDING, REJECTED, PAUSED, DISABLED, PENDING_DELETION, and others; null while no status update came.",
        }),
        previousStatus: nullable({
          type: 'string',
          description: 'The status before this change (equal to `status` when the quality or category changed).',
        }),
        category: nullable({ type: 'string', description: 'MARKETING, UTILITY, AUTHENTICATION' }),
        qualityScore: nullable({ type: 'string', description: 'GREEN, YELLOW, RED, UNKNOWN' }),
        reason: nullable({ type: 'string', description: "The provider's reason of the last status update." }),
        change: { type: 'string', enum: ['status', 'quality', 'category'], description: 'What this event changed.' },
        timestamp: { ...time, description: "The provider's time of the change; reorder by it." },
      },
    ),
    'The provider changed the status, quality score or category of a template of one of your official accounts (one event per change). A send of a PAUSED or DISABLED template fails with TEMPLATE_NOT_APPROVED.',
  ),
  WebhookTestEvent: envelope(
    'webhook.test',
    obj(['webhookEndpointId', 'message'], {
      webhookEndpointId: { type: 'string', format: 'uuid' },
      message: { type: 'string' },
    }),
    'Queued by POST /webhook-endpoints/{id}/test, to that endpoint only.',
  ),
};

const headers = [
  {
    name: 'x-svc-event',
    in: 'header',
    required: true,
    description: 'The event `type`.',
    schema: { type: 'string' },
  },
  {
    name: 'x-svc-event-id',
    in: 'header',
    required: true,
    description: 'The `eventId`; deduplicate on it.',
    schema: { type: 'string' },
  },
  {
    name: 'x-svc-signature',
    in: 'header',
    required: true,
    description:
      "`t=<unix seconds>,v1=<hex HMAC-SHA256>`: the HMAC of `<t>.<raw body bytes>` keyed with the endpoint's `whsec_` secret. Reject when |now − t| > 300 s; compare in constant time; check the raw bytes before parsing. For 24 hours after a rotation there are two `v1=` values (new and old secret): accept when any matches. `constructEvent` of `@chatgate/client` does all this and returns the typed event (`verifyWebhookSignature` only checks).",
    schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
    example: 't=1767225600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  },
];

const EXAMPLES: Record<string, unknown> = {
  MessageStatusEvent: {
    eventId: 'evt_0b7e6a53-3f9c-4a4e-9d1e-8f2f0b1f6b10',
    type: 'message.status',
    createdAt: '2026-06-01T10:00:02.120Z',
    data: {
      messageId: '3f1c8e62-1d2b-4f3a-9a57-6f0c2d1e9b44',
      externalId: 'order-1042-shipped',
      status: 'delivered',
      previousStatus: 'sent',
      channel: 'chat_official',
      recipient: '+15551234567',
      chatAccountId: '9d4b1a2c-5e6f-4a70-8b91-c2d3e4f5a6b7',
      timestamp: '2026-06-01T10:00:02.000Z',
      error: null,
    },
  },
  AccountMessagingLimitEvent: {
    eventId: 'evt_7a1e3c5b-2d4f-4e60-9b8a-0c1d2e3f4a5b',
    type: 'account.messaging_limit',
    createdAt: '2026-06-24T15:04:05.678Z',
    data: {
      chatAccountIds: ['9d4b1a2c-5e6f-4a70-8b91-c2d3e4f5a6b7'],
      portfolioId: null,
      thresholdPercent: 80,
      used: 200,
      limit: 250,
      tier: 'TIER_250',
      source: 'provider',
      windowHours: 24,
    },
  },
  QuotaThresholdEvent: {
    eventId: 'evt_5c0d2f7e-9a41-4b8e-b3d6-1e2f3a4b5c6d',
    type: 'quota.threshold',
    createdAt: '2026-06-24T15:04:05.678Z',
    data: { threshold: 80, limit: 10000, used: 8000, resetsAt: '2026-07-01T00:00:00.000Z' },
  },
};

function webhook(type: string, schema: string, summary: string) {
  return {
    post: {
      operationId: `on${schema}`,
      summary,
      tags: ['events'],
      security: [],
      parameters: headers,
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: ref(schema), ...(EXAMPLES[schema] ? { example: EXAMPLES[schema] } : {}) },
        },
      },
      responses: {
        '200': {
          description:
            'Any 2xx acknowledges the event. Anything else, a redirect or no answer within 10 seconds is a failure: retried up to 8 attempts over about 12 hours with the same eventId.',
        },
      },
      description: `POSTed with \`content-type: application/json\` and \`x-svc-event: ${type}\` to each active endpoint subscribed to \`${type}\`. Delivery order is not guaranteed; receivers ignore unknown event types and fields.`,
    },
  };
}

export const webhooksSection = {
  'message.status': webhook('message.status', 'MessageStatusEvent', 'A message changed status'),
  'message.inbound': webhook('message.inbound', 'MessageInboundEvent', 'A message arrived'),
  'sender.first_inbound': webhook(
    'sender.first_inbound',
    'SenderFirstInboundEvent',
    'A number wrote for the first time',
  ),
  'webhook.test': webhook('webhook.test', 'WebhookTestEvent', 'A test event'),
  'quota.threshold': webhook('quota.threshold', 'QuotaThresholdEvent', 'Monthly quota use reached 80 % or 100 %'),
  'template.status': webhook('template.status', 'TemplateStatusEvent', 'A template changed at the provider'),
  'account.messaging_limit': webhook(
    'account.messaging_limit',
    'AccountMessagingLimitEvent',
    "A business portfolio's messaging limit use reached 80 % or 100 %",
  ),
};
