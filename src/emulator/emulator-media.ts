// Media upload: POST /{version}/{phone-number-id}/media, multipart with messaging_product, file
// (and type); the provider's type and size limits answered with 131053.
import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';

import { bearerToken, injectedBody, numericId, refuseToken, tokenRefused } from './emulator-common.js';
import { MEDIA_LIMITS } from './emulator-limits.js';
import type { EmulatorState } from './emulator-state.js';
import { graphError } from './graph-error.js';

export function registerMediaRoute(app: FastifyInstance, state: EmulatorState): void {
  app.post<{ Params: { version: string; phoneNumberId: string } }>(
    '/:version/:phoneNumberId/media',
    async (request, reply) => {
      const token = bearerToken(request);
      const number = state.numbers.get(request.params.phoneNumberId);
      if (tokenRefused(token, number)) return refuseToken(reply);
      const rule = state.takeRule(request.params.phoneNumberId, 'media');
      if (rule?.httpStatus !== undefined || rule?.error)
        return reply.code(rule.httpStatus ?? 400).send(injectedBody(rule));
      let form: FormData;
      try {
        form = await new Response(new Uint8Array(request.body as Buffer), {
          headers: { 'content-type': String(request.headers['content-type'] ?? '') },
        }).formData();
      } catch {
        return reply.code(400).send(graphError(100, 'Invalid parameter'));
      }
      const file = form.get('file');
      if (form.get('messaging_product') !== 'whatsapp' || !(file instanceof Blob))
        return reply.code(400).send(graphError(100, 'Invalid parameter'));
      const mimeType = String(form.get('type') ?? file.type);
      const limit = MEDIA_LIMITS[mimeType];
      if (limit === undefined || file.size > limit)
        return reply.code(400).send(graphError(131053, 'Media upload error', undefined));
      const data = Buffer.from(await file.arrayBuffer());
      const id = numericId();
      state.media.set(id, {
        mimeType,
        size: file.size,
        filename: (file as File).name ?? null,
        sha256: crypto.createHash('sha256').update(data).digest('hex'),
        phoneNumberId: request.params.phoneNumberId,
      });
      return { id };
    },
  );
}
