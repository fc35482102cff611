// /messages: send, read one, list, cancel one that has not left.
import { Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

import type { MessageCancel } from '../../messages/cancel-message.js';
import type { MessageQueries } from '../../messages/message-store.js';
import { type SendRequest, SendRequestSchema } from '../../messages/send-request.js';
import type { SendService } from '../../messages/send-service.js';
import { ErrorBody, PageQuery, Timestamp, Uuid } from '../../shared/schemas.js';
import { CHANNEL_OFFICIAL, MESSAGE_STATUSES } from '../../shared/vocab.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { Message, MessagePage, SendAck } from '../schemas/messages.js';
import type { Server } from '../server.js';
import { callerOf, tagRequest } from '../server.js';
import { KIND_EXAMPLES } from './kind-examples.js';
import { parseTimestamp } from './read-scope.js';

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
const readScope: ErrorCode[] = ['key_scope_violation', 'account_not_found'];
/** What a send can answer beyond the standard errors (a broadcast too). */
export const SEND_CHECKS: ErrorCode[] = [
  'key_scope_violation',
  'invalid_chat_account',
  'chat_account_required',
  'invalid_media',
  'conflict',
  'quota_exceeded',
];
const to = { type: 'phone', phoneE164: '+15551234567' };

const schemas = {
  // The body's cross-field rules: src/http/cross-field.ts, by the schema's marker.
  send: {
    operationId: 'sendMessage',
    summary: 'Queue one message',
    description:
      "Queues one message: `201` for a new `externalId`, `200` with the original for a repeat of the same send (no new message, no quota), `409 conflict` for the same `externalId` with another payload. A `201` only proves the message was queued: its `status` proves delivery. Retrying with the same `externalId` after a network error or a 500 is safe. With `sendAt` (UTC, 60 s to 35 days ahead and before the message expires) the message is accepted and counted now, stays `pending` with `scheduledAt`, and leaves at that time; `sendAt` is part of the payload for idempotency. With `requireReplyWindow: true`, a text, image or document to a number whose 24-hour reply window is closed (see `replyWindowExpiresAt` of the sender) ends `failed` with `REENGAGEMENT_REQUIRED` at once, without a provider call and with its quota given back. Beyond the spec, `content.type` also takes `audio`, `video`, `sticker`, `location`, `contacts`, `interactive` (reply buttons, a list, a call-to-action URL) and `reaction`, each validated at the provider's limits; `replyTo` sends the message as a reply to an earlier one of the same conversation (`404 message_not_found` when it is not the caller's).",
    ...common,
    body: SendRequestSchema,
    response: { 200: SendAck, 201: SendAck, '4xx': ErrorBody },
    // message_not_found: the message a reply or a reaction names (decision 0032).
    'x-errors': ['templates_not_available', 'message_not_found', ...SEND_CHECKS],
    'x-examples': {
      text: {
        summary: 'A text message',
        value: { externalId: 'order-1042-shipped', to, content: { type: 'text', text: 'Your order has shipped.' } },
      },
      template: {
        summary: 'An approved template with positional body values',
        value: {
          externalId: 'order-1042-reminder',
          to,
          content: {
            type: 'template',
            template: { name: 'order_update', language: 'en_US', components: { body: ['Ada', '1042'] } },
          },
          metadata: { orderId: 1042 },
        },
      },
      templateWithComponents: {
        summary: 'A template with an image header, a URL button value and a quick-reply payload',
        value: {
          externalId: 'order-1042-tracking',
          to,
          content: {
            type: 'template',
            template: {
              name: 'shipping_update',
              language: 'en_US',
              components: {
                headerMedia: { type: 'image', url: 'https://example.com/parcel.jpg' },
                body: ['Ada', '1042'],
                buttons: [
                  { index: 0, subType: 'quick_reply', value: 'stop-1042' },
                  { index: 1, subType: 'url', value: '1042' },
                ],
              },
            },
          },
        },
      },
      authenticationCode: {
        summary: 'An authentication template: the code in the body and in its one-time-password button',
        value: {
          externalId: 'login-7731',
          to,
          content: {
            type: 'template',
            template: {
              name: 'login_code',
              language: 'en_US',
              components: { body: ['482913'], buttons: [{ index: 0, subType: 'url', value: '482913' }] },
            },
          },
        },
      },
      image: {
        summary: 'An image by URL, with a caption',
        value: {
          externalId: 'order-1042-photo',
          to,
          content: { type: 'image', image: { url: 'https://example.com/parcel.jpg' }, caption: 'Your parcel' },
        },
      },
      document: {
        summary: 'A document uploaded with POST /media',
        value: {
          externalId: 'order-1042-invoice',
          to,
          content: {
            type: 'document',
            document: { mediaId: '7c9e6679-7425-40de-944b-e07fc1f90ae7', filename: 'invoice-1042.pdf' },
          },
          ttlSeconds: 86400,
        },
      },
      ...KIND_EXAMPLES,
    },
  },
  get: {
    operationId: 'getMessage',
    summary: 'One message, by messageId or by your externalId',
    ...common,
    params: MessageRef,
    response: { 200: Message },
    'x-errors': ['message_not_found'],
  },
  cancel: {
    operationId: 'cancelMessage',
    summary: 'Cancel a message that has not left yet (pending or queued)',
    description:
      'Cancels a message that has not left yet (`pending`, a scheduled one included, or `queued`, a retry wait included): it ends `failed` with `error.code` `CANCELLED` and a `message.status` event, and its quota comes back when it was never tried and was counted this month. `{id}` is the `messageId` or your `externalId`. A repeat answers `200` with the same record. A message already `sent` or later, failed for another reason, or being sent by a worker at this moment answers `409 not_cancellable` with its `status`: a message is never both sent and cancelled. A sandbox key cancels only sandbox messages.',
    ...common,
    params: MessageRef,
    response: { 200: Message },
    'x-errors': ['message_not_found', 'not_cancellable', 'sandbox_not_supported'],
  },
  list: {
    operationId: 'listMessages',
    summary: 'Messages, newest first, with cursor pagination',
    ...common,
    querystring: ListQuery,
    response: { 200: MessagePage },
    'x-errors': ['invalid_cursor', ...readScope],
  },
} satisfies Record<string, FastifySchema>;

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
