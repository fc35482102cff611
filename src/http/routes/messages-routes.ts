// /messages: send, read one, list, cancel one that has not left.
import { Type } from '@sinclair/typebox';

import type { MessageCancel } from '../../messages/cancel-message.js';
import type { MessageQueries } from '../../messages/message-store.js';
import { type SendRequest, SendRequestSchema } from '../../messages/send-request.js';
import type { SendService } from '../../messages/send-service.js';
import { ErrorBody, PageQuery, Timestamp, Uuid } from '../../shared/schemas.js';
import { CHANNEL_OFFICIAL, MESSAGE_STATUSES } from '../../shared/vocab.js';
import type { Server } from '../server.js';
import { callerOf, tagRequest } from '../server.js';
import { parseTimestamp } from './read-scope.js';

const Ack = Type.Object({
  messageId: Type.String(),
  externalId: Type.String(),
  status: Type.String(),
  queued: Type.Boolean(),
});

const ListQuery = Type.Object(
  {
    status: Type.Optional(Type.Union(MESSAGE_STATUSES.map((s) => Type.Literal(s)))),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    providerMessageId: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    channel: Type.Optional(Type.Literal(CHANNEL_OFFICIAL)),
    chatAccountId: Type.Optional(Uuid()),
    broadcastId: Type.Optional(Uuid()),
    /** true: scheduled sends still waiting for their sendAt (pending); false: every other message. */
    scheduled: Type.Optional(Type.Boolean()),
    since: Type.Optional(Timestamp()),
    until: Type.Optional(Timestamp()),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const MessageRef = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

const common = { tags: ['messages'], security: [{ apiKey: [] }] };

const schemas = {
  // The body's cross-field rules: src/http/cross-field.ts, by the schema's marker.
  send: {
    summary: 'Queue one message',
    ...common,
    body: SendRequestSchema,
    response: { 200: Ack, 201: Ack, '4xx': ErrorBody },
  },
  get: { summary: 'One message, by messageId or by your externalId', ...common, params: MessageRef },
  cancel: { summary: 'Cancel a message that has not left yet (pending or queued)', ...common, params: MessageRef },
  list: { summary: 'Messages, newest first, with cursor pagination', ...common, querystring: ListQuery },
};

export function registerMessageRoutes(
  app: Server,
  deps: { sends: SendService; queries: MessageQueries; cancels: MessageCancel },
) {
  app.post('/messages', { schema: schemas.send }, async (request, reply) => {
    const result = await deps.sends.send(callerOf(request), request.body as SendRequest);
    tagRequest(request, { messageId: result.ack.messageId, accountId: result.chatAccountId });
    return reply.code(result.created ? 201 : 200).send(result.ack);
  });

  app.get('/messages/:id', { schema: schemas.get }, async (request) => {
    const message = await deps.queries.get(callerOf(request), request.params.id);
    tagRequest(request, { messageId: message.messageId, accountId: message.chatAccountId });
    return message;
  });

  app.post('/messages/:id/cancel', { schema: schemas.cancel }, async (request) => {
    const message = await deps.cancels.cancel(callerOf(request), request.params.id);
    tagRequest(request, { messageId: message.messageId, accountId: message.chatAccountId });
    return message;
  });

  app.get('/messages', { schema: schemas.list }, async (request) => {
    const q = request.query;
    const since = parseTimestamp(q.since, 'since');
    const until = parseTimestamp(q.until, 'until');
    return deps.queries.list(callerOf(request), { ...q, since, until, limit: q.limit ?? 50 });
  });
}
