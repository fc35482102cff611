// /webhook-endpoints: management, the test event, delivery history and redelivery. Who may
// manage which endpoints (plans, key scope, sandbox) is the endpoint service's rule.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchema } from 'fastify';

import { Uuid } from '../../shared/schemas.js';
import { CreateEndpointSchema, UpdateEndpointSchema } from '../../webhooks/endpoint-input.js';
import type { EndpointService } from '../../webhooks/endpoint-service.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { NoContent } from '../openapi/route-docs.js';
import {
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookRedeliveryQueued,
  WebhookTestQueued,
} from '../schemas/webhooks.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';
import type { KeyAudit } from './key-audit.js';

const Id = Type.Object({ id: Uuid() });

const common = { tags: ['webhooks'], security: [{ apiKey: [] }] };
const gate: ErrorCode[] = ['feature_not_available', 'key_scope_insufficient'];
const endpointGate: ErrorCode[] = [...gate, 'webhook_endpoint_not_found'];

const schemas = {
  create: {
    ...common,
    operationId: 'createWebhookEndpoint',
    summary: 'Create an endpoint (its secret is shown once, here)',
    description:
      'Registers an HTTPS endpoint (at most 5 active; plans Basic and Pro). The answer carries the signing `secret`, shown only here. `events` defaults to every event type.',
    body: CreateEndpointSchema,
    response: { 201: WebhookEndpointWithSecret },
    'x-errors': [...gate, 'invalid_webhook_url', 'limit_reached'],
    'x-examples': {
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
  list: {
    ...common,
    operationId: 'listWebhookEndpoints',
    summary: 'List endpoints (no secrets)',
    response: { 200: WebhookEndpointList },
    'x-errors': gate,
  },
  get: {
    ...common,
    operationId: 'getWebhookEndpoint',
    summary: 'One endpoint',
    params: Id,
    response: { 200: WebhookEndpoint },
    'x-errors': endpointGate,
  },
  update: {
    ...common,
    operationId: 'updateWebhookEndpoint',
    summary: 'Change url, events, description or isActive',
    params: Id,
    body: UpdateEndpointSchema,
    response: { 200: WebhookEndpoint },
    'x-errors': [...endpointGate, 'invalid_webhook_url', 'limit_reached'],
    'x-examples': {
      pause: { summary: 'Pause deliveries', value: { isActive: false } },
      events: { summary: 'Change the subscription', value: { events: ['message.status', 'message.inbound'] } },
    },
  },
  remove: {
    ...common,
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete an endpoint and its delivery history',
    params: Id,
    response: { 204: NoContent },
    'x-errors': endpointGate,
  },
  rotateSecret: {
    ...common,
    operationId: 'rotateWebhookSecret',
    summary: 'New secret (shown once); the old one signs too for 24 h',
    description:
      'A new secret, returned once. For 24 hours (`previousSecretExpiresAt`) every delivery is signed with both secrets: `x-svc-signature` carries two `v1=` values.',
    params: Id,
    response: { 200: WebhookEndpointWithSecret },
    'x-errors': endpointGate,
  },
  test: {
    ...common,
    operationId: 'testWebhookEndpoint',
    summary: 'Queue a webhook.test event to this endpoint',
    params: Id,
    response: { 202: WebhookTestQueued },
    'x-errors': endpointGate,
  },
  deliveries: {
    ...common,
    operationId: 'listWebhookDeliveries',
    summary: 'Delivery history with attempts, newest first',
    params: Id,
    querystring: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
    response: { 200: WebhookDeliveryPage },
    'x-errors': [...endpointGate, 'invalid_cursor'],
  },
  redeliver: {
    ...common,
    operationId: 'redeliverWebhookDelivery',
    summary: 'Send one delivery again now (same eventId)',
    params: Type.Object({ id: Uuid(), deliveryId: Uuid() }),
    response: { 202: WebhookRedeliveryQueued },
    'x-errors': [...endpointGate, 'webhook_delivery_not_found'],
  },
} satisfies Record<string, FastifySchema>;

export function registerWebhookRoutes(app: Server, deps: { endpoints: EndpointService; audited: KeyAudit }) {
  const { endpoints } = deps;
  /** Every change to an endpoint is in the customer's audit log, by the key, named by the endpoint's URL. */
  const { audited } = deps;
  const urlOf = async (request: FastifyRequest, id: string) => (await endpoints.get(callerOf(request), id)).url;
  app.post('/webhook-endpoints', { schema: schemas.create }, async (request, reply) => {
    const created = await endpoints.create(callerOf(request), request.body);
    await audited(request, 'webhook.create', created.url);
    return reply.code(201).send(created);
  });
  app.get('/webhook-endpoints', { schema: schemas.list }, async (request) => ({
    webhookEndpoints: await endpoints.list(callerOf(request)),
  }));
  app.get('/webhook-endpoints/:id', { schema: schemas.get }, async (request) =>
    endpoints.get(callerOf(request), request.params.id),
  );
  app.patch('/webhook-endpoints/:id', { schema: schemas.update }, async (request) => {
    const before = await urlOf(request, request.params.id);
    const updated = await endpoints.update(callerOf(request), request.params.id, request.body);
    if (updated.url !== before) await audited(request, 'webhook.url_change', `${before} → ${updated.url}`);
    else await audited(request, 'webhook.update', updated.url);
    return updated;
  });
  app.delete('/webhook-endpoints/:id', { schema: schemas.remove }, async (request, reply) => {
    const url = await urlOf(request, request.params.id);
    await endpoints.remove(callerOf(request), request.params.id);
    await audited(request, 'webhook.delete', url);
    return reply.code(204).send();
  });
  app.post('/webhook-endpoints/:id/rotate-secret', { schema: schemas.rotateSecret }, async (request) => {
    const rotated = await endpoints.rotateSecret(callerOf(request), request.params.id);
    await audited(request, 'webhook.rotate_secret', rotated.url);
    return rotated;
  });
  app.post('/webhook-endpoints/:id/test', { schema: schemas.test }, async (request, reply) => {
    const queued = await endpoints.sendTest(callerOf(request), request.params.id);
    await audited(request, 'webhook.test', await urlOf(request, request.params.id));
    return reply.code(202).send(queued);
  });
  app.get('/webhook-endpoints/:id/deliveries', { schema: schemas.deliveries }, async (request) =>
    endpoints.deliveries(callerOf(request), request.params.id, {
      limit: request.query.limit ?? 50,
      cursor: request.query.cursor,
    }),
  );
  app.post(
    '/webhook-endpoints/:id/deliveries/:deliveryId/redeliver',
    { schema: schemas.redeliver },
    async (request, reply) => {
      const queued = await endpoints.redeliver(callerOf(request), request.params.id, request.params.deliveryId);
      const url = await urlOf(request, request.params.id);
      await audited(request, 'webhook.redeliver', `event ${queued.eventId} to ${url}`);
      return reply.code(202).send(queued);
    },
  );
}
