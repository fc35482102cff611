// The answers about inbound messages: senders, the inbox, inbox filters and forwarding rules
// (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';
import { inboundContentProps, InboundReferral } from './inbound-content.js';

export const Sender = component(
  'Sender',
  Type.Object({
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
    firstReferral: Type.Optional(InboundReferral),
  }),
);

export const SenderList = component('SenderList', Type.Object({ senders: Type.Array(Sender) }));

/** Also the `replyTo` of the message.inbound event (events.ts refers to it by name). */
export const ReplyTo = component(
  'ReplyTo',
  Type.Object({
    providerMessageId: Type.String(),
    messageId: Nullable(Id()),
    externalId: Nullable(Type.String()),
  }),
);

export const InboundMessage = component(
  'InboundMessage',
  Type.Object({
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
    replyTo: Nullable(ReplyTo),
    readAt: Type.Optional(
      NullableTime('When POST /inbound-messages/{id}/read marked it read at the provider; null before.'),
    ),
    ...inboundContentProps,
  }),
);

export const InboundReadMark = component(
  'InboundReadMark',
  Type.Object({
    inboundMessageId: Id(),
    readAt: Time(),
    typing: Type.Boolean(),
    sandbox: Type.Optional(Type.Literal(true)),
  }),
);

export const InboundMessagePage = component('InboundMessagePage', Page('inboundMessages', InboundMessage));

export const InboxFilter = component(
  'InboxFilter',
  Type.Object({
    chatAccountId: Id(),
    mode: Enum(['off', 'whitelist', 'blacklist']),
    numbers: Type.Array(Type.String()),
  }),
);

export const ForwardingRule = component(
  'ForwardingRule',
  Type.Object({
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
);

export const ForwardingRuleList = component(
  'ForwardingRuleList',
  Type.Object({ forwardingRules: Type.Array(ForwardingRule) }),
);
