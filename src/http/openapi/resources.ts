// The answers of the API as documentation schemas (components.schemas of /openapi.json). They
// describe what the services return; routes do not serialize with them (a response schema in a
// route would make fast-json-stringify drop or coerce fields). The test harness validates every
// answer the tests receive against them, so they cannot drift from the code unnoticed.
import { type TSchema, Type } from '@sinclair/typebox';

import {
  ACCOUNT_STATUSES,
  ACCOUNT_TYPES,
  BROADCAST_STATUSES,
  EVENT_TYPES,
  MESSAGE_STATUSES,
  SEND_POLICY_MODES,
  SUPPRESSION_SOURCES,
  TEMPLATE_ACCESS,
  WABA_VERIFICATIONS,
} from '../../shared/vocab.js';
import { inboundContentProps, inboundContentSchemas } from './inbound-content.js';

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Enum = (values: readonly string[], opts: Record<string, unknown> = {}) =>
  Type.String({ enum: [...values], ...opts });
const Time = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const NullableTime = (description?: string) => Nullable(Time(description));
const Id = (description?: string) => Type.String({ format: 'uuid', ...(description ? { description } : {}) });
const ref = (name: string) => Type.Unsafe({ $ref: `#/components/schemas/${name}` });
const Page = (items: string, name: string) =>
  Type.Object({
    [items]: Type.Array(ref(name)),
    nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  });

/** A Graph API version's standing (GET /admin/provider; /readyz shows the same for the version in use). */
const ApiVersionFields = {
  state: Type.String({
    enum: ['current', 'expiring', 'expired', 'unknown'],
    description: 'expiring: within 90 days of its expiry; expired: the provider no longer serves it.',
  }),
  released: Nullable(Type.String({ format: 'date', description: 'Release date (UTC).' })),
  expires: Nullable(
    Type.String({ format: 'date', description: "The provider's published end of service; null: not published yet." }),
  ),
  daysLeft: Nullable(Type.Integer({ description: 'Days until `expires` (0 or less once expired).' })),
};

/** The counters of GET /usage (sandbox never counted). */
const UsageCounters = {
  accepted: Type.Integer({ description: 'Messages accepted (quota charged), on the day of the charge.' }),
  sent: Type.Integer({ description: 'Messages that reached sent that day (UTC, provider time when known).' }),
  delivered: Type.Integer({ description: 'Messages that reached delivered that day.' }),
  read: Type.Integer({ description: 'Messages that reached read that day.' }),
  failed: Type.Integer({ description: 'Messages that failed that day.' }),
};

/** GET /usage's counts of priced messages (issue #25). */
const PricingCounts = {
  billable: Type.Integer({ description: 'Priced messages whose receipt said `billable: true`.' }),
  free: Type.Integer({ description: 'Priced messages whose receipt said `billable: false`.' }),
  unknown: Type.Integer({ description: 'Priced messages whose receipt had no `billable` flag.' }),
};

/** A message's price as the provider's status receipt said it (issue #25). */
const MessagePricing = Type.Object(
  {
    billable: Nullable(Type.Boolean()),
    pricingModel: Nullable(
      Type.String({ description: '`PMP` (per message, since July 2025); `CBP` on older receipts.' }),
    ),
    category: Nullable(
      Type.String({ description: '`marketing`, `utility`, `authentication`, `service` … as the provider named it.' }),
    ),
    type: Nullable(Type.String({ description: '`regular`, `free_customer_service`, `free_entry_point` …' })),
  },
  {
    additionalProperties: true,
    description:
      "What the message costs, as the provider's status receipt said it (stored as received, never inferred); null until a receipt priced it. Addition (issue #25).",
  },
);

const ProviderDetail = Type.Object(
  {
    code: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String()]))),
    subcode: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String()]))),
    message: Type.Optional(Nullable(Type.String())),
    fbtraceId: Type.Optional(Nullable(Type.String())),
    source: Type.Optional(Enum(['send_attempt', 'status_webhook'])),
  },
  { description: 'Sanitized provider detail, when the provider gave one. Never tokens or payloads.' },
);

const SendError = Type.Object({
  code: Type.String({
    description:
      'Service error code, e.g. SANDBOX_SIMULATED_FAILURE, MEDIA_UNAVAILABLE, RECIPIENT_OPTED_OUT, REENGAGEMENT_REQUIRED, TEMPLATE_NOT_APPROVED, SEND_INTERRUPTED (every attempt used, the last one never finished: the worker stopped during the send), REPLY_TARGET_UNAVAILABLE (the message a reply or reaction names was never sent).',
  }),
  message: Type.String(),
  provider: Type.Optional(Nullable(ProviderDetail)),
});

const Capability = Type.Object({ supported: Type.Boolean(), enabled: Type.Boolean() });
/** A reply or a reaction: `inboundMessages` tells whether it may name an inbound message (the inbox, plan Pro). */
const ReachCapability = Type.Object({
  supported: Type.Boolean(),
  enabled: Type.Boolean(),
  inboundMessages: Type.Boolean(),
});

/** components.schemas: every resource the public and operator APIs answer with. */
export const resourceSchemas: Record<string, TSchema> = {
  SendAck: Type.Object(
    {
      messageId: Id(),
      externalId: Type.String(),
      status: Enum(MESSAGE_STATUSES, { description: '`pending` on creation; the current status on a repeat.' }),
      queued: Type.Boolean(),
    },
    { description: 'The send acknowledgement: 201 for a new message, 200 for a repeat of the same send.' },
  ),
  Message: Type.Object({
    messageId: Id(),
    externalId: Type.String(),
    recipient: Type.String({
      description:
        'E.164; for a send by user id (`to.type: "userId"`), the number known for that id at accept, else the id itself.',
    }),
    recipientUserId: Type.Optional(
      Nullable(
        Type.String({
          description: 'The business-scoped user id the send addressed; null for a send to a number. Addition.',
        }),
      ),
    ),
    channel: Type.String(),
    status: Enum(MESSAGE_STATUSES),
    attemptCount: Type.Integer(),
    lastErrorCode: Nullable(Type.String()),
    broadcastId: Nullable(Id()),
    chatAccountId: Id(),
    createdAt: Time(),
    scheduledAt: NullableTime(
      'A scheduled send: the `sendAt` it was accepted with (kept after it is sent); null when it was due at once.',
    ),
    sentAt: NullableTime(),
    deliveredAt: NullableTime(),
    readAt: NullableTime(),
    failedAt: NullableTime(),
    providerMessageId: Nullable(Type.String()),
    expiresAt: Time('When the record is purged.'),
    sandbox: Type.Boolean(),
    processing: Type.Object({
      queueState: Enum(['waiting', 'in_flight', 'retry_scheduled', 'done']),
      attemptCount: Type.Integer(),
      maxAttempts: Type.Integer(),
      nextAttemptAt: NullableTime(),
      lastAttemptAt: NullableTime(),
      route: Type.Optional(
        Nullable(
          Enum(['messages', 'marketing_messages'], {
            description:
              'The provider endpoint that carried the send: /messages, or the Marketing Messages API for a MARKETING template of an account with it on. Null until sent (and for sandbox messages).',
          }),
        ),
      ),
    }),
    error: Nullable(SendError),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
    pricing: Type.Optional(Nullable(MessagePricing)),
    reactions: Type.Optional(
      Type.Array(ref('MessageReaction'), {
        description: "GET /messages/{id}: the users' current reactions to this message (not on list items).",
      }),
    ),
  }),
  MessagePage: Page('messages', 'Message'),
  ChatAccount: Type.Object({
    id: Id(),
    type: Enum(ACCOUNT_TYPES),
    status: Enum(ACCOUNT_STATUSES),
    phoneNumber: Type.String(),
    displayName: Type.String(),
    connectedAt: Time(),
    channel: Enum(['chat_official', 'chat_direct']),
    lastErrorCode: Nullable(Type.String()),
    official: Nullable(
      Type.Object({
        phoneNumberId: Type.String(),
        wabaId: Type.String(),
        wabaVerification: Enum(WABA_VERIFICATIONS),
        verifiedName: Nullable(Type.String()),
      }),
    ),
    sendPolicy: Nullable(Type.Object({ mode: Enum(SEND_POLICY_MODES), testRecipientsCount: Nullable(Type.Integer()) })),
    webhook: Nullable(Type.Object({ integrationId: Nullable(Type.String()), callbackUrl: Type.String() })),
    capabilities: Type.Object({
      text: Capability,
      media: Capability,
      template: Capability,
      namedTemplateParameters: Type.Object({
        supported: Type.Boolean(),
        enabled: Type.Boolean(),
        scope: Type.Literal('body'),
      }),
      templateManagement: Type.Object({
        supported: Type.Boolean(),
        enabled: Type.Boolean(),
        verifiedAt: NullableTime(),
      }),
      statusWebhooks: Capability,
      audio: Capability,
      video: Capability,
      sticker: Capability,
      location: Capability,
      contacts: Capability,
      interactive: Capability,
      reaction: ReachCapability,
      replyTo: ReachCapability,
    }),
  }),
  ChatAccountList: Type.Object({ accounts: Type.Array(ref('ChatAccount')) }),
  MediaUpload: Type.Object({
    mediaId: Id(),
    mimetype: Type.String(),
    sizeBytes: Type.Integer(),
    filename: Type.String(),
    expiresAt: Time('Expiry if never used in a message (1 hour).'),
  }),
  BroadcastAck: Type.Object({
    broadcastId: Id(),
    externalId: Type.String(),
    name: Nullable(Type.String()),
    chatAccountId: Id(),
    status: Enum(BROADCAST_STATUSES),
    recipients: Type.Integer(),
    queued: Type.Integer(),
    createdAt: Time(),
  }),
  Broadcast: Type.Object({
    broadcastId: Id(),
    externalId: Type.String(),
    name: Nullable(Type.String()),
    chatAccountId: Id(),
    status: Enum(BROADCAST_STATUSES),
    recipients: Type.Integer(),
    counts: Type.Object(Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, Type.Integer()]))),
    cancelledMessages: Type.Integer(),
    createdAt: Time(),
    cancelledAt: NullableTime(),
    expiresAt: Time(),
  }),
  BroadcastPage: Page('broadcasts', 'Broadcast'),
  Sender: Type.Object({
    phoneE164: Type.String(),
    chatAccountId: Id(),
    hasWritten: Type.Boolean(),
    firstInboundAt: NullableTime(),
    lastInboundAt: NullableTime(),
    inboundCount: Type.Integer(),
    sandbox: Type.Boolean(),
    optedOut: Type.Boolean({
      description: "On this account's suppression list (GET /chat-accounts/{id}/suppressions).",
    }),
    optedOutAt: NullableTime(),
    replyWindowExpiresAt: NullableTime(
      'lastInboundAt + 24 h: free text, images and documents reach the number before this instant.',
    ),
  }),
  SenderList: Type.Object({ senders: Type.Array(ref('Sender')) }),
  Suppression: Type.Object({
    phone: Type.String({ description: 'E.164.' }),
    reason: Type.String(),
    source: Enum(SUPPRESSION_SOURCES),
    since: Time(),
  }),
  SuppressionPage: Page('suppressions', 'Suppression'),
  OptOutKeywords: Type.Object({ chatAccountId: Id(), keywords: Type.Array(Type.String()) }),
  ReplyTo: Type.Object({
    providerMessageId: Type.String(),
    messageId: Nullable(Id()),
    externalId: Nullable(Type.String()),
  }),
  InboundMessage: Type.Object({
    inboundMessageId: Id(),
    chatAccountId: Id(),
    channel: Type.String(),
    from: Nullable(Type.String()),
    fromUserId: Nullable(
      Type.String({
        description:
          "The provider's business-scoped user id of the sender, when it gave one (the number may then be absent); null otherwise.",
      }),
    ),
    fromDisplayName: Type.String(),
    messageType: Type.String(),
    text: Nullable(Type.String()),
    displayText: Nullable(Type.String()),
    receivedAt: Time(),
    replyTo: Nullable(ref('ReplyTo')),
    readAt: Type.Optional(
      NullableTime('When POST /inbound-messages/{id}/read marked it read at the provider; null before.'),
    ),
    ...inboundContentProps,
  }),
  InboundReadMark: Type.Object({
    inboundMessageId: Id(),
    readAt: Time(),
    typing: Type.Boolean(),
    sandbox: Type.Optional(Type.Literal(true)),
  }),
  ...inboundContentSchemas,
  InboundMessagePage: Page('inboundMessages', 'InboundMessage'),
  InboxFilter: Type.Object({
    chatAccountId: Id(),
    mode: Enum(['off', 'whitelist', 'blacklist']),
    numbers: Type.Array(Type.String()),
  }),
  ForwardingRule: Type.Object({
    id: Id(),
    name: Type.String(),
    chatAccountId: Nullable(Id()),
    condition: Type.Object({
      type: Enum(['contains', 'starts_with', 'regex']),
      pattern: Type.String(),
      caseSensitive: Type.Boolean(),
    }),
    destination: Type.Object({ type: Type.Literal('http'), url: Type.String() }),
    isActive: Type.Boolean(),
    createdAt: Time(),
    updatedAt: Time(),
  }),
  ForwardingRuleList: Type.Object({ forwardingRules: Type.Array(ref('ForwardingRule')) }),
  WebhookEndpoint: Type.Object({
    id: Id(),
    url: Type.String(),
    description: Type.String(),
    events: Type.Array(Enum(EVENT_TYPES)),
    isActive: Type.Boolean(),
    lastSuccessAt: NullableTime(),
    lastFailureAt: NullableTime(),
    lastFailureReason: Nullable(Type.String()),
    createdAt: Time(),
    updatedAt: Time(),
  }),
  WebhookEndpointWithSecret: Type.Intersect(
    [
      ref('WebhookEndpoint'),
      Type.Object({
        secret: Type.String({ pattern: '^whsec_', description: 'The signing secret, shown only in this answer.' }),
        previousSecretExpiresAt: Type.Optional(
          NullableTime('After a rotation: until then every delivery is signed with both secrets.'),
        ),
      }),
    ],
    { description: 'The endpoint with its signing secret (creation and rotation only).' },
  ),
  WebhookEndpointList: Type.Object({ webhookEndpoints: Type.Array(ref('WebhookEndpoint')) }),
  WebhookTestQueued: Type.Object({ eventId: Type.String({ pattern: '^evt_' }), queued: Type.Literal(true) }),
  WebhookDelivery: Type.Object({
    id: Id(),
    eventId: Type.String(),
    eventType: Enum(EVENT_TYPES),
    status: Enum(['pending', 'succeeded', 'failed']),
    attemptCount: Type.Integer(),
    nextAttemptAt: NullableTime(),
    lastStatusCode: Nullable(Type.Integer()),
    createdAt: Time(),
    completedAt: NullableTime(),
    attempts: Type.Array(
      Type.Object({
        attemptedAt: Type.String(),
        statusCode: Nullable(Type.Integer()),
        durationMs: Nullable(Type.Integer()),
        responseBody: Nullable(Type.String({ description: 'The first 1 KiB.' })),
        error: Nullable(Type.String()),
      }),
    ),
  }),
  WebhookDeliveryPage: Page('deliveries', 'WebhookDelivery'),
  WebhookRedeliveryQueued: Type.Object({ deliveryId: Id(), eventId: Type.String(), queued: Type.Literal(true) }),
  Template: Type.Object({
    id: Type.String(),
    name: Type.String(),
    language: Type.String(),
    category: Type.String(),
    status: Type.String(),
    rejectedReason: Nullable(Type.String()),
    parameterFormat: Enum(['NAMED', 'POSITIONAL']),
    parameterCount: Type.Integer(),
    components: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'As the provider returns them.',
    }),
    qualityScore: Type.Optional(Type.Object({ score: Type.String(), date: NullableTime() })),
  }),
  TemplatePage: Page('templates', 'Template'),
  // The operator API (Authorization: Bearer ADMIN_TOKEN).
  Customer: Type.Object(
    {
      id: Id(),
      name: Type.String(),
      plan: Enum(['free', 'starter', 'basic', 'pro']),
      defaultCountry: Nullable(Type.String()),
      createdAt: Time(),
      updatedAt: Time(),
      usage: Type.Optional(Type.Object({ month: Type.String(), used: Type.Integer(), limit: Type.Integer() })),
    },
    { additionalProperties: true },
  ),
  CustomerPage: Page('customers', 'Customer'),
  CustomerUsage: Type.Object(
    {
      customerId: Id(),
      month: Type.String({ description: 'The UTC month, YYYY-MM.' }),
      plan: Enum(['free', 'starter', 'basic', 'pro']),
      limit: Type.Integer(),
      used: Type.Integer(),
      remaining: Type.Integer(),
      resetsAt: Time('When the quota renews: the first instant of the next UTC month.'),
    },
    { additionalProperties: true },
  ),
  Usage: Type.Object(
    {
      month: Type.String({ description: 'The UTC month, YYYY-MM.' }),
      plan: Enum(['free', 'starter', 'basic', 'pro'], { description: 'Your plan now.' }),
      limit: Type.Integer({ description: "The plan's monthly limit: the `limit` of a `429 quota_exceeded`." }),
      used: Type.Integer({
        description:
          'The quota counter of the month: the `used` of a `429 quota_exceeded` (refunds of cancelled, never-tried messages taken back). Whole customer, whatever the key scope.',
      }),
      remaining: Type.Integer(),
      resetsAt: Time('When the quota renews: the first instant of the next UTC month.'),
      byDay: Type.Array(
        Type.Object(
          { date: Type.String({ format: 'date', description: 'UTC day, YYYY-MM-DD.' }), ...UsageCounters },
          { additionalProperties: true },
        ),
        { description: 'Every day of the month up to today (a past month: all its days), zeros included.' },
      ),
      byAccount: Type.Array(Type.Object({ chatAccountId: Id(), ...UsageCounters }, { additionalProperties: true }), {
        description: 'The accounts with any count in the month, by id. A scoped key: its account only (byDay too).',
      }),
      pricing: Type.Optional(
        Type.Object(
          {
            ...PricingCounts,
            byCategory: Type.Array(
              Type.Object({ category: Type.String(), ...PricingCounts }, { additionalProperties: true }),
            ),
          },
          {
            additionalProperties: true,
            description:
              "Messages the provider priced in the month (on the UTC day of their first pricing receipt), as its receipts said: `billable`, `free`, or `unknown` (no `billable` flag), in all and by the receipt's `category`. Addition (issue #25).",
          },
        ),
      ),
    },
    { additionalProperties: true },
  ),
  OperatorChatAccountPage: Page('chatAccounts', 'OperatorChatAccount'),
  OperatorChatAccount: Type.Intersect([
    ref('ChatAccount'),
    Type.Object(
      {
        customerId: Id(),
        throughputMps: Type.Integer(),
        marketingMessages: Type.Object(
          {
            enabled: Type.Boolean({
              description: 'MARKETING templates go over the Marketing Messages API (decision 0038).',
            }),
            refusedUntil: NullableTime(
              'Until when /messages carries them instead: the provider answered 131055 (not onboarded) and the API is tried again after this.',
            ),
          },
          { additionalProperties: true },
        ),
        probe: Nullable(
          Type.Object({
            nextAt: Time('When the next re-verification of a rejected token is due.'),
            attempts: Type.Integer({ description: 'Probes in a row that did not get the token accepted.' }),
          }),
        ),
      },
      { additionalProperties: true },
    ),
  ]),
  ApiKey: Type.Object(
    {
      id: Id(),
      key: Type.Optional(Type.String({ description: 'The full key: only in the answer that creates it.' })),
      maskedKey: Type.String(),
      name: Nullable(Type.String()),
      sandbox: Type.Boolean(),
      chatAccountId: Nullable(Id()),
      templateAccess: Enum(TEMPLATE_ACCESS),
      createdAt: Time(),
      revokedAt: NullableTime(),
    },
    { additionalProperties: true },
  ),
  ApiKeyList: Type.Object({ apiKeys: Type.Array(ref('ApiKey')) }),
  RekeyResult: Type.Object(
    {
      keyId: Type.String({ description: 'The id of the key every value is now sealed with.' }),
      previousKeyId: Nullable(
        Type.String({ description: 'The key still needed for some values; null: ENCRYPTION_KEY_PREVIOUS may go.' }),
      ),
      resealed: Type.Integer({ description: 'Values re-sealed by this run.' }),
      remaining: Type.Integer({ description: 'Values still not under keyId (run again; 0 when done).' }),
      unreadable: Type.Integer({ description: 'Values neither key opens, left as they are.' }),
    },
    { additionalProperties: true },
  ),
  ProviderSettings: Type.Object(
    {
      ...ApiVersionFields,
      apiVersion: Type.String({ description: 'The Graph API version this process calls (PROVIDER_API_VERSION).' }),
      versions: Type.Array(
        Type.Object(
          { version: Type.String({ description: 'A Graph API version, e.g. v23.0.' }), ...ApiVersionFields },
          { additionalProperties: true },
        ),
        { description: 'Every version this release knows, newest first (docs/provider-protocol-2026.md).' },
      ),
    },
    { additionalProperties: true },
  ),
  InboundIngested: Type.Object({ ingested: Type.Boolean(), duplicate: Type.Boolean() }, { additionalProperties: true }),
  PortalUser: Type.Object(
    {
      id: Id(),
      customerId: Id(),
      email: Type.String(),
      role: Enum(['owner', 'viewer']),
      status: Enum(['invited', 'active', 'disabled']),
      createdAt: Time(),
    },
    { additionalProperties: true },
  ),
  PortalUserInvited: Type.Intersect([
    ref('PortalUser'),
    Type.Object({
      invitationUrl: Type.String({ description: 'One-time link to set the password: shown in this answer only.' }),
      expiresAt: Time('When the invitation link stops working.'),
    }),
  ]),
  PortalUserList: Type.Object({ users: Type.Array(ref('PortalUser')) }),
};
