// Multipart bodies for the portal routes that upload a file (the broadcast CSV); no other
// portal route parses multipart.
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

import { checkRequestInput } from '../input-guard.js';
import { html } from './html.js';
import { publicPage, wayBack } from './layout.js';
import { sendPage } from './reply.js';

/** Fields and parts a portal upload form may have (the broadcast form: about fifteen, and one per template variable, at most 100). */
const UPLOAD_FIELDS = 130;

/**
 * The routes `routes` registers take multipart bodies (one file upload); no other portal route
 * does. The whole body must declare its length (Content-Length) within BODY_LIMIT_BYTES, checked
 * before any of it is read (and after the session: the portal's onRequest runs first).
 */
export function registerUploadRoutes(
  app: FastifyInstance,
  /** The page of the form that uploads (the way back from a refusal). */
  formPath: string,
  routes: (upload: FastifyInstance) => void,
): void {
  void app.register(async (upload) => {
    const limit = upload.initialConfig.bodyLimit ?? 1024 * 1024;
    await upload.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: {
        fileSize: limit,
        fieldSize: limit,
        files: 1,
        fields: UPLOAD_FIELDS,
        parts: UPLOAD_FIELDS + 1,
        headerPairs: 20,
      },
    });
    // Multipart attaches its fields in a preValidation hook of its own, after the server's input
    // guard ran: the guard looks again once they are there (a file's bytes are the route's to read).
    upload.addHook('preValidation', checkRequestInput);
    upload.addHook('onRequest', async (request, reply) => {
      if (!request.headers['content-type']?.toLowerCase().startsWith('multipart/')) return;
      const declared = request.headers['content-length'];
      if (declared === undefined || !/^\d+$/.test(declared))
        return sendPage(
          reply,
          publicPage(
            'Length required',
            html`<p role="alert">Send the form again.</p>
              <p><a href="${formPath}">Back to the form</a></p>
              ${wayBack(request.url)}`,
          ),
          411,
        );
      if (Number(declared) > limit)
        return sendPage(
          reply,
          publicPage(
            'Too large',
            html`<p role="alert">
                The form is larger than ${Math.floor(limit / 1024)} KiB. Upload a smaller file, or split the recipients
                into several broadcasts.
              </p>
              <p><a href="${formPath}">Back to the form</a></p>
              ${wayBack(request.url)}`,
          ),
          413,
        );
    });
    routes(upload);
  });
}
