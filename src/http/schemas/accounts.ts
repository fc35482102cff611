// The answers about chat accounts (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { ACCOUNT_STATUSES, ACCOUNT_TYPES, SEND_POLICY_MODES, WABA_VERIFICATIONS } from '../../shared/vocab.js';
import { component, Enum, Id, Nullable, NullableTime, Time } from './common.js';

const Capability = Type.Object({ supported: Type.Boolean(), enabled: Type.Boolean() });
/** A reply or a reaction: `inboundMessages` tells whether it may name an inbound message (the inbox, plan Pro). */
const ReachCapability = Type.Object({
  supported: Type.Boolean(),
  enabled: Type.Boolean(),
  inboundMessages: Type.Boolean(),
});

/** A business portfolio's messaging limit and its use (decision 0044). */
const MessagingLimit = Type.Object(
  {
    limit: Nullable(
      Type.Integer({
        description:
          'Unique recipients the portfolio may start conversations with (business-initiated sends: a template to someone whose reply window is closed) in a moving `windowHours`, all its numbers together; null: unlimited.',
      }),
    ),
    tier: Nullable(
      Type.String({
        description:
          "The provider's tier name of `limit` (TIER_250, TIER_2K, TIER_10K, TIER_100K, TIER_UNLIMITED); null for a cap of the operator's.",
      }),
    ),
    source: Enum(['default', 'provider', 'operator'], {
      description: "Who set `limit`: the default (250), the provider's webhook, or the operator.",
    }),
    used: Type.Integer({ description: 'Unique recipients started in the last `windowHours`.' }),
    windowHours: Type.Integer(),
  },
  { additionalProperties: true },
);

export const ChatAccount = component(
  'ChatAccount',
  Type.Object({
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
    messagingLimit: Type.Optional(MessagingLimit),
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
);

export const ChatAccountList = component('ChatAccountList', Type.Object({ accounts: Type.Array(ChatAccount) }));
