// An inbound message's file in the portal (decision 0041): the same inbound-files service and the
// same answer (http/inbound-file-reply.ts) as GET /inbound-messages/{id}/media, with the signed-in
// user as the caller (another customer's message is 404; viewers may view).
import type { FastifyInstance } from 'fastify';

import { sendInboundFile } from '../inbound-file-reply.js';
import { idParam, type PortalDeps, tenantOf } from './deps.js';

/** The portal path of an inbound message's file. */
export const inboundMediaPath = (inboundMessageId: string) => `/portal/inbox/${inboundMessageId}/media`;

export function registerInboxMediaRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/inbox/:id/media', async (request, reply) => {
    const { caller } = await tenantOf(deps, request);
    const file = await deps.files.open(caller, idParam(request));
    return sendInboundFile(reply, file);
  });
}
