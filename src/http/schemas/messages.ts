// The answers of /messages and /media (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { MESSAGE_STATUSES } from '../../shared/vocab.js';
import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';
import { MessageReaction } from './inbound-content.js';

const ProviderDetail = Type.Object(
  {
    code: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String()]))),
    subcode: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String()]))),
    message: Type.Optional(Nullable(Type.String())),
    fbtraceId: Type.Optional(Nullable(Type.String())),
    source: Type.Optional(Enum(['send_attempt', 'status_webhook'])),
  },
  {
    description: 'Sanitized provider detail, when the provider gave one. Never tokens or payloads.',
    additionalProperties: true,
  },
);

// Stored as JSON with the message: open, so that no field recorded with it is ever dropped.
const SendError = Type.Object(
  {
    code: Type.String({
      description:
        'Service error code, e.g. SANDBOX_SIMULATED_FAILURE, MEDIA_UNAVAILABLE, RECIPIENT_OPTED_OUT, REENGAGEMENT_REQUIRED, TEMPLATE_NOT_APPROVED, SEND_INTERRUPTED (every attempt used, the last one never finished: the worker stopped during the send), REPLY_TARGET_UNAVAILABLE (the message a reply or reaction names was never sent).',
    }),
    message: Type.String(),
    provider: Type.Optional(Nullable(ProviderDetail)),
  },
  { additionalProperties: true },
);

/** A message's price as the provider's status receipt said it (issue #25); open: stored as received. */
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

export const SendAck = component(
  'SendAck',
  Type.Object(
    {
      messageId: Id(),
      externalId: Type.String(),
      status: Enum(MESSAGE_STATUSES, { description: '`pending` on creation; the current status on a repeat.' }),
      queued: Type.Boolean(),
    },
    { description: 'The send acknowledgement: 201 for a new message, 200 for a repeat of the same send.' },
  ),
);

export const Message = component(
  'Message',
  Type.Object({
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
      Type.Array(MessageReaction, {
        description: "GET /messages/{id}: the users' current reactions to this message (not on list items).",
      }),
    ),
  }),
);

export const MessagePage = component('MessagePage', Page('messages', Message));

export const MediaUpload = component(
  'MediaUpload',
  Type.Object({
    mediaId: Id(),
    mimetype: Type.String(),
    sizeBytes: Type.Integer(),
    filename: Type.String(),
    expiresAt: Time('Expiry if never used in a message (1 hour).'),
  }),
);
