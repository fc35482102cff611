// How an inbound message's file is answered, the same through the API
// (GET /inbound-messages/{id}/media) and the portal (/portal/inbox/{id}/media): its type and size;
// shown in place (`inline`) only for image, audio and video types a browser plays without running
// anything, every other type a download (`attachment`); its own Content-Security-Policy (nothing
// runs or loads from it, sandboxed); never cached; no other site may embed it. (nosniff is on
// every answer: server.ts.)
import type { FastifyReply } from 'fastify';

import type { InboundFile } from '../senders/inbound-files.js';

/** Types shown in place; SVG and anything scriptable are never inline. */
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

export function sendInboundFile(reply: FastifyReply, file: InboundFile) {
  return reply
    .header('content-type', file.mimeType)
    .header('content-length', String(file.size))
    .header('content-disposition', disposition(file.mimeType, file.filename))
    .header('cache-control', 'private, no-store')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cross-origin-resource-policy', 'same-origin')
    .send(file.data);
}
