// The answers of /messages and /media (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { MESSAGE_STATUSES } from '../../shared/vocab.js';
import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';

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
        'Service error code, e.g. SANDBOX_SIMULATED_FAILURE, MEDIA_UNAVAILABLE, RECIPIENT_OPTED_OUT, REENGAGEMENT_REQUIRED, TEMPLATE_NOT_APPROVED, SEND_INTERRUPTED (every attempt used, the last one never finished: the worker stopped during the send).',
    }),
    message: Type.String(),
    provider: Type.Optional(Nullable(ProviderDetail)),
  },
  { additionalProperties: true },
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
    recipient: Type.String({ description: 'E.164' }),
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
    }),
    error: Nullable(SendError),
    metadata: Nullable(Type.Object({}, { additionalProperties: true })),
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
