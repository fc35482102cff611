// An inbound message's file, and marking the message read (decision 0034). Who may read what (plan,
// key scope, sandbox, the customer) is the services' rule.
import { Type } from '@sinclair/typebox';

import type { ReadMarker } from '../../dispatch/mark-read.js';
import type { InboundFiles } from '../../senders/inbound-files.js';
import { Uuid } from '../../shared/schemas.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const common = { security: [{ apiKey: [] }], tags: ['inbound'] };
const params = Type.Object({ id: Uuid() });

const schemas = {
  media: {
    ...common,
    summary: "The inbound message's file, with its type and size",
    params,
  },
  read: {
    ...common,
    summary: 'Mark the inbound message read at the provider (blue ticks), optionally with the typing indicator',
    params,
    body: Type.Optional(
      Type.Union([
        Type.Object({ typing: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        Type.Null(),
      ]),
    ),
  },
};

export function registerInboundMediaRoutes(app: Server, deps: { files: InboundFiles; reads: ReadMarker }) {
  app.get('/inbound-messages/:id/media', { schema: schemas.media }, async (request, reply) => {
    const file = await deps.files.open(callerOf(request), request.params.id);
    return reply
      .header('content-type', file.mimeType)
      .header('content-length', String(file.size))
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(file.data);
  });

  app.post('/inbound-messages/:id/read', { schema: schemas.read }, async (request) =>
    deps.reads.markRead(callerOf(request), request.params.id, request.body?.typing === true),
  );
}
