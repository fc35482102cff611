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
