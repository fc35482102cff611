// /messages/broadcast and /broadcasts: send one content to a list, read a broadcast's progress, cancel it.
import { Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

import { type BroadcastRequest, BroadcastRequestSchema } from '../../broadcasts/broadcast-request.js';
import type { BroadcastService } from '../../broadcasts/broadcast-service.js';
import { ErrorBody, PageQuery } from '../../shared/schemas.js';
import { BROADCAST_STATUSES } from '../../shared/vocab.js';
import { Broadcast, BroadcastAck, BroadcastPage } from '../schemas/broadcasts.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';
import { SEND_CHECKS } from './messages-routes.js';

/** 5,000 recipients with their own externalIds and template values do not fit the default body limit. */
const BROADCAST_BODY_LIMIT = 8 * 1024 * 1024;

const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

const ListQuery = Type.Object(
  { status: Type.Optional(Type.Union(BROADCAST_STATUSES.map((s) => Type.Literal(s)))), ...PageQuery },
  { additionalProperties: false },
);

const common = { tags: ['broadcasts'], security: [{ apiKey: [] }] };

const schemas = {
  // The body's cross-field rules: src/http/cross-field.ts, by the schema's marker.
  create: {
    ...common,
    operationId: 'sendBroadcast',
    summary: 'Queue one content to up to 5,000 recipients (plans Basic and Pro)',
    description:
      'Queues one content to up to 5,000 recipients, each an ordinary message carrying `broadcastId`. Accepted whole or not at all (the quota for every recipient is reserved at once). `200` with the original for a repeat of the same broadcast.',
    body: BroadcastRequestSchema,
    response: { 200: BroadcastAck, 201: BroadcastAck, '4xx': ErrorBody },
    'x-errors': ['sandbox_not_supported', 'feature_not_available', ...SEND_CHECKS],
    'x-examples': {
      text: {
        summary: 'A text to three recipients',
        value: {
          externalId: 'spring-sale-2026',
          name: 'Spring sale',
          content: { type: 'text', text: 'Our spring sale starts today.' },
          recipients: [{ phoneE164: '+15551234567' }, { phoneE164: '+15551234568' }, { phoneE164: '+15551234569' }],
        },
      },
      template: {
        summary: 'A template with per-recipient values',
        value: {
          externalId: 'renewals-2026-06',
          content: {
            type: 'template',
            template: { name: 'renewal_due', language: 'en', components: { body: ['you'] } },
          },
          recipients: [
            { phoneE164: '+15551234567', externalId: 'renewal-ada', components: { body: ['Ada'] } },
            { phoneE164: '+15551234568', externalId: 'renewal-alan', components: { body: ['Alan'] } },
          ],
        },
      },
    },
  },
  list: {
    ...common,
    operationId: 'listBroadcasts',
    summary: 'Your broadcasts, newest first, with progress counts and cursor pagination',
    querystring: ListQuery,
    response: { 200: BroadcastPage },
    'x-errors': ['invalid_cursor'],
  },
  get: {
    ...common,
    operationId: 'getBroadcast',
    summary: 'One broadcast, by broadcastId or by your externalId, with progress counts',
    params: Id,
    response: { 200: Broadcast },
    'x-errors': ['broadcast_not_found'],
  },
  cancel: {
    ...common,
    operationId: 'cancelBroadcast',
    summary: 'Cancel the messages of a broadcast that have not left yet',
    params: Id,
    response: { 200: Broadcast },
    'x-errors': ['broadcast_not_found', 'sandbox_not_supported'],
  },
} satisfies Record<string, FastifySchema>;

export function registerBroadcastRoutes(app: Server, deps: { broadcasts: BroadcastService }) {
  app.post(
    '/messages/broadcast',
    {
      bodyLimit: BROADCAST_BODY_LIMIT,
      // Who may broadcast at all is answered before what is wrong with the body.
      preValidation: async (request) => {
        deps.broadcasts.checkAllowed(callerOf(request));
      },
      schema: schemas.create,
    },
    async (request, reply) => {
      const result = await deps.broadcasts.create(callerOf(request), request.body as BroadcastRequest);
      return reply.code(result.created ? 201 : 200).send(result.ack);
    },
  );

  app.get('/broadcasts', { schema: schemas.list }, async (request) => {
    const q = request.query;
    return deps.broadcasts.list(callerOf(request), { status: q.status, limit: q.limit ?? 50, cursor: q.cursor });
  });

  app.get('/broadcasts/:id', { schema: schemas.get }, async (request) =>
    deps.broadcasts.get(callerOf(request), request.params.id),
  );

  app.post('/broadcasts/:id/cancel', { schema: schemas.cancel }, async (request) =>
    deps.broadcasts.cancel(callerOf(request), request.params.id),
  );
}
