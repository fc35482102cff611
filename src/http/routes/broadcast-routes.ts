// /messages/broadcast and /broadcasts: send one content to a list, read a broadcast's progress, cancel it.
import { Type } from '@sinclair/typebox';

import { type BroadcastRequest, BroadcastRequestSchema } from '../../broadcasts/broadcast-request.js';
import type { BroadcastService } from '../../broadcasts/broadcast-service.js';
import { ErrorBody, PageQuery } from '../../shared/schemas.js';
import { BROADCAST_STATUSES } from '../../shared/vocab.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

/** 5,000 recipients with their own externalIds and template values do not fit the default body limit. */
const BROADCAST_BODY_LIMIT = 8 * 1024 * 1024;

const Ack = Type.Object({
  broadcastId: Type.String(),
  externalId: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  chatAccountId: Type.String(),
  status: Type.String(),
  recipients: Type.Integer(),
  queued: Type.Integer(),
  createdAt: Type.String(),
});

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
    summary: 'Queue one content to up to 5,000 recipients (plans Basic and Pro)',
    body: BroadcastRequestSchema,
    response: { 200: Ack, 201: Ack, '4xx': ErrorBody },
  },
  list: {
    ...common,
    summary: 'Your broadcasts, newest first, with progress counts and cursor pagination',
    querystring: ListQuery,
  },
  get: { ...common, summary: 'One broadcast, by broadcastId or by your externalId, with progress counts', params: Id },
  cancel: { ...common, summary: 'Cancel the messages of a broadcast that have not left yet', params: Id },
};

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
