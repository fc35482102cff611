// /webhook-endpoints: management, the test event, delivery history and redelivery. Who may
// manage which endpoints (plans, key scope, sandbox) is the endpoint service's rule.
import { Type } from '@sinclair/typebox';

import { Uuid } from '../../shared/schemas.js';
import { CreateEndpointSchema, UpdateEndpointSchema } from '../../webhooks/endpoint-input.js';
import type { EndpointService } from '../../webhooks/endpoint-service.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const Id = Type.Object({ id: Uuid() });

const common = { tags: ['webhooks'], security: [{ apiKey: [] }] };

const schemas = {
  create: {
    ...common,
    summary: 'Create an endpoint (its secret is shown once, here)',
    body: CreateEndpointSchema,
  },
  list: { ...common, summary: 'List endpoints (no secrets)' },
  get: { ...common, summary: 'One endpoint', params: Id },
  update: {
    ...common,
    summary: 'Change url, events, description or isActive',
    params: Id,
    body: UpdateEndpointSchema,
  },
  remove: { ...common, summary: 'Delete an endpoint and its delivery history', params: Id },
  rotateSecret: { ...common, summary: 'New secret (shown once); the old one signs too for 24 h', params: Id },
  test: { ...common, summary: 'Queue a webhook.test event to this endpoint', params: Id },
  deliveries: {
    ...common,
    summary: 'Delivery history with attempts, newest first',
    params: Id,
    querystring: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  },
  redeliver: {
    ...common,
    summary: 'Send one delivery again now (same eventId)',
    params: Type.Object({ id: Uuid(), deliveryId: Uuid() }),
  },
};

export function registerWebhookRoutes(app: Server, deps: { endpoints: EndpointService }) {
  const { endpoints } = deps;
  app.post('/webhook-endpoints', { schema: schemas.create }, async (request, reply) =>
    reply.code(201).send(await endpoints.create(callerOf(request), request.body)),
  );
  app.get('/webhook-endpoints', { schema: schemas.list }, async (request) => ({
    webhookEndpoints: await endpoints.list(callerOf(request)),
  }));
  app.get('/webhook-endpoints/:id', { schema: schemas.get }, async (request) =>
    endpoints.get(callerOf(request), request.params.id),
  );
  app.patch('/webhook-endpoints/:id', { schema: schemas.update }, async (request) =>
    endpoints.update(callerOf(request), request.params.id, request.body),
  );
  app.delete('/webhook-endpoints/:id', { schema: schemas.remove }, async (request, reply) => {
    await endpoints.remove(callerOf(request), request.params.id);
    return reply.code(204).send();
  });
  app.post('/webhook-endpoints/:id/rotate-secret', { schema: schemas.rotateSecret }, async (request) =>
    endpoints.rotateSecret(callerOf(request), request.params.id),
  );
  app.post('/webhook-endpoints/:id/test', { schema: schemas.test }, async (request, reply) =>
    reply.code(202).send(await endpoints.sendTest(callerOf(request), request.params.id)),
  );
  app.get('/webhook-endpoints/:id/deliveries', { schema: schemas.deliveries }, async (request) =>
    endpoints.deliveries(callerOf(request), request.params.id, {
      limit: request.query.limit ?? 50,
      cursor: request.query.cursor,
    }),
  );
  app.post(
    '/webhook-endpoints/:id/deliveries/:deliveryId/redeliver',
    { schema: schemas.redeliver },
    async (request, reply) =>
      reply.code(202).send(await endpoints.redeliver(callerOf(request), request.params.id, request.params.deliveryId)),
  );
}
