// An inbound message's file in the portal (decision 0041): the same inbound-files service as
// GET /inbound-messages/{id}/media, with the signed-in user as the caller (another customer's
// message is 404; viewers may view). Shown in the page (`inline`) only for image, audio and video
// types a browser plays without running anything; every other type is a download (`attachment`).
// The file carries its own Content-Security-Policy (nothing may run or load from it, sandboxed),
// nosniff, and a Cross-Origin-Resource-Policy so that no other site can embed it.
import type { FastifyInstance } from 'fastify';

import { idParam, type PortalDeps, tenantOf } from './deps.js';

/** Types shown in the page; SVG and anything scriptable are never inline. */
const INLINE_TYPES = new Set([
  'image/jpeg',
  'image/png',
  'image/webp',
  'image/gif',
  'audio/ogg',
  'audio/mpeg',
  'audio/mp4',
  'audio/aac',
  'audio/amr',
  'video/mp4',
  'video/3gpp',
]);

/** The CSP of a served file: nothing runs and nothing loads from it. */
export const FILE_CSP = "default-src 'none'; sandbox";

export function isInlineType(mimeType: string): boolean {
  return INLINE_TYPES.has(mimeType.split(';')[0]!.trim().toLowerCase());
}

/** `inline` or `attachment`, with the file's name (ASCII fallback plus RFC 8187 UTF-8). */
export function disposition(mimeType: string, filename: string | null): string {
  const kind = isInlineType(mimeType) ? 'inline' : 'attachment';
  if (!filename) return kind;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** The portal path of an inbound message's file. */
export const inboundMediaPath = (inboundMessageId: string) => `/portal/inbox/${inboundMessageId}/media`;

export function registerInboxMediaRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/inbox/:id/media', async (request, reply) => {
    const { caller } = await tenantOf(deps, request);
    const file = await deps.files.open(caller, idParam(request));
    return reply
      .header('content-type', file.mimeType)
      .header('content-length', String(file.size))
      .header('content-disposition', disposition(file.mimeType, file.filename))
      .header('cache-control', 'private, no-store')
      .header('content-security-policy', FILE_CSP)
      .header('cross-origin-resource-policy', 'same-origin')
      .send(file.data);
  });
}
