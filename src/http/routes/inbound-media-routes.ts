// An inbound message's file, and marking the message read (decision 0034). Who may read what (plan,
// key scope, sandbox, the customer) is the services' rule.
import { Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

import type { ReadMarker } from '../../dispatch/mark-read.js';
import type { InboundFiles } from '../../senders/inbound-files.js';
import { Uuid } from '../../shared/schemas.js';
import { sendInboundFile } from '../inbound-file-reply.js';
import { FileBody } from '../openapi/route-docs.js';
import { InboundReadMark } from '../schemas/inbound.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const common = { security: [{ apiKey: [] }], tags: ['inbound'] };
const params = Type.Object({ id: Uuid() });

const schemas = {
  media: {
    ...common,
    operationId: 'getInboundMedia',
    summary: "The inbound message's file, with its type and size",
    description:
      "The file of an inbound message (image, audio or voice note, video, sticker, document), as fetched from the provider: the body is the file's bytes, with its `Content-Type` and `Content-Length`. `409 media_not_ready` while it is being fetched, `410 media_unavailable` when it never will be (see `media.state` on the message).",
    params,
    response: { 200: FileBody },
    'x-errors': [
      'inbound_message_not_found',
      'inbound_media_not_found',
      'media_not_ready',
      'media_unavailable',
      'feature_not_available',
    ],
  },
  read: {
    ...common,
    operationId: 'markInboundRead',
    description:
      "Marks the inbound message read at the provider (blue ticks); with `typing: true` the user also sees the typing indicator (up to 25 s, or until the reply). Once per message: a repeat answers the first call's `readAt` and `typing` without a provider call. The call takes a slot of the account's pacing, like its sends. A sandbox key gets a simulated answer (`sandbox: true`) and nothing is sent.",
    response: { 200: InboundReadMark },
    'x-errors': ['inbound_message_not_found', 'feature_not_available', 'provider_unavailable'],
    'x-examples': { typing: { summary: 'Read, and show the typing indicator', value: { typing: true } } },
    summary: 'Mark the inbound message read at the provider (blue ticks), optionally with the typing indicator',
    params,
    body: Type.Optional(
      Type.Union([
        Type.Object({ typing: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        Type.Null(),
      ]),
    ),
  },
} satisfies Record<string, FastifySchema>;

export function registerInboundMediaRoutes(app: Server, deps: { files: InboundFiles; reads: ReadMarker }) {
  app.get('/inbound-messages/:id/media', { schema: schemas.media }, async (request, reply) => {
    const file = await deps.files.open(callerOf(request), request.params.id);
    return sendInboundFile(reply, file);
  });

  app.post('/inbound-messages/:id/read', { schema: schemas.read }, async (request) =>
    deps.reads.markRead(callerOf(request), request.params.id, request.body?.typing === true),
  );
}
