// The answers of /messages/broadcast and /broadcasts (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { BROADCAST_STATUSES, MESSAGE_STATUSES } from '../../shared/vocab.js';
import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';

export const BroadcastAck = component(
  'BroadcastAck',
  Type.Object({
    broadcastId: Id(),
    externalId: Type.String(),
    name: Nullable(Type.String()),
    chatAccountId: Id(),
    status: Enum(BROADCAST_STATUSES),
    recipients: Type.Integer(),
    queued: Type.Integer(),
    createdAt: Time(),
  }),
);

export const Broadcast = component(
  'Broadcast',
  Type.Object({
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
    /** The request's sendAt; null when it was sent at once (or created before sendAt was kept). */
    sendAt: NullableTime(),
  }),
);

export const BroadcastPage = component('BroadcastPage', Page('broadcasts', Broadcast));
