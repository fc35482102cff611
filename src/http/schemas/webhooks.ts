// The answers of /webhook-endpoints (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { EVENT_TYPES } from '../../shared/vocab.js';
import { component, Enum, Id, Nullable, NullableTime, Page, Time } from './common.js';

export const WebhookEndpoint = component(
  'WebhookEndpoint',
  Type.Object({
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
);

export const WebhookEndpointWithSecret = component(
  'WebhookEndpointWithSecret',
  Type.Intersect(
    [
      WebhookEndpoint,
      Type.Object({
        secret: Type.String({ pattern: '^whsec_', description: 'The signing secret, shown only in this answer.' }),
        previousSecretExpiresAt: Type.Optional(
          NullableTime('After a rotation: until then every delivery is signed with both secrets.'),
        ),
      }),
    ],
    { description: 'The endpoint with its signing secret (creation and rotation only).' },
  ),
);

export const WebhookEndpointList = component(
  'WebhookEndpointList',
  Type.Object({ webhookEndpoints: Type.Array(WebhookEndpoint) }),
);

export const WebhookTestQueued = component(
  'WebhookTestQueued',
  Type.Object({ eventId: Type.String({ pattern: '^evt_' }), queued: Type.Literal(true) }),
);

export const WebhookDelivery = component(
  'WebhookDelivery',
  Type.Object({
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
);

export const WebhookDeliveryPage = component('WebhookDeliveryPage', Page('deliveries', WebhookDelivery));

export const WebhookRedeliveryQueued = component(
  'WebhookRedeliveryQueued',
  Type.Object({ deliveryId: Id(), eventId: Type.String(), queued: Type.Literal(true) }),
);
