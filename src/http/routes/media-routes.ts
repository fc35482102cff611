// POST /media: one file in the multipart field `file`, streamed with a hard cap (a body announced
// or found to be over 20 MB is refused: the answer waits until the rest, up to twice the route's
// body limit, has been read and discarded, see drain-body.ts), then typed and stored.
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';

import type { MediaService } from '../../media/media-service.js';
import { MAX_UPLOAD_BYTES } from '../../media/media-type.js';
import { AppError, errors, type Problem } from '../../shared/errors.js';
import { createFairSlots } from '../../shared/fair-slots.js';
import { ErrorBody } from '../../shared/schemas.js';
import { MediaUpload } from '../schemas/messages.js';
import type { Server } from '../server.js';
import { principalOf } from '../server.js';

/** Room for the multipart framing around a file of the maximum size. */
const FRAMING_BYTES = 64 * 1024;
const MAX_FILENAME = 255;
const DEFAULT_FILENAME = 'file';
/**
 * Uploads read at once per process: each holds its file (up to 20 MB) plus its base64 form on the
 * way to the database; later ones wait (their bytes stay in the socket, unread). A customer holds
 * at most half of the places, so its stalled or slow uploads never stop another customer's; a
 * stalled one ends at the read deadline (BODY_READ_TIMEOUT_MS), an abandoned one at once.
 */
const CONCURRENT_UPLOADS = 4;
const UPLOADS_PER_CUSTOMER = 2;

/**
 * Aborts when the client goes away before its answer. A request whose connection closed while it
 * waited for a place must not start parsing: the multipart parser listens for the request's
 * 'close', which has already happened, and would wait for ever (with the place).
 */
function clientGone(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  const abort = () => gone.abort(Object.assign(new Error('the client closed the connection'), { statusCode: 400 }));
  if (reply.raw.destroyed || request.raw.socket.destroyed) abort();
  else
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort();
    });
  return gone.signal;
}

/** The body as documented: Fastify does not parse it (the handler streams the parts). */
const MULTIPART_FILE = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'At most 20 MB.' },
        },
      },
    },
  },
};

const uploadSchema = {
  operationId: 'uploadMedia',
  summary: 'Upload an image or document to send later by mediaId',
  description:
    "multipart/form-data with one field `file` (at most 20 MB). The type is detected from the content first, then the part's Content-Type, then the file name. Unused uploads expire after 1 hour; at most 200 may wait unused.",
  tags: ['media'],
  consumes: ['multipart/form-data'],
  security: [{ apiKey: [] }],
  response: { 201: MediaUpload, 400: ErrorBody, 413: ErrorBody, 415: ErrorBody, 429: ErrorBody },
  'x-errors': ['media_too_large', 'media_pending_limit'],
  'x-request-body': MULTIPART_FILE,
} satisfies FastifySchema;

/** Reads the one file of the multipart body, checks it, and stores it. */
async function receive(media: MediaService, request: FastifyRequest, reply: FastifyReply, customerId: string) {
  let file: { data: Buffer; filename: string; declaredType: string | null } | null = null;
  const problems: Problem[] = [];
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file' || part.fieldname !== 'file' || file !== null) {
        problems.push({
          path: part.fieldname,
          message: 'is not allowed: send one field named `file` holding the file',
        });
        if (part.type === 'file') part.file.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of part.file) chunks.push(chunk as Buffer);
      if (part.file.truncated) throw errors.mediaTooLarge();
      file = {
        data: Buffer.concat(chunks),
        filename: part.filename?.trim() || DEFAULT_FILENAME,
        declaredType: part.mimetype ?? null,
      };
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw errors.mediaTooLarge();
    // Everything else thrown while parsing is about the body: limits, malformed framing or
    // headers, a body cut short.
    request.log.debug({ err }, 'malformed multipart body');
    throw errors.validation([
      {
        path: 'file',
        message: 'the body must be well-formed multipart/form-data with one field `file` holding the file',
      },
    ]);
  }
  if (file === null)
    problems.push({ path: 'file', message: 'is required: a multipart field named `file` holding the file' });
  else if (file.data.length === 0) problems.push({ path: 'file', message: 'must not be empty' });
  else if (file.filename.length > MAX_FILENAME)
    problems.push({ path: 'file', message: `file name must be at most ${MAX_FILENAME} characters` });
  else if (/[\u0000-\u001f\u007f]/.test(file.filename))
    problems.push({ path: 'file', message: 'file name must not contain control characters' });
  if (problems.length > 0) throw errors.validation(problems);

  const saved = await media.save(customerId, file!);
  return reply.code(201).send(saved);
}

export function registerMediaRoutes(app: Server, deps: { media: MediaService }) {
  const uploads = createFairSlots({ total: CONCURRENT_UPLOADS, perKey: UPLOADS_PER_CUSTOMER });
  void app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 1024, parts: 11, headerPairs: 100 },
    });

    scope.post(
      '/media',
      // Not read by Fastify (multipart streams its own way); bounds what an early answer drains.
      { bodyLimit: MAX_UPLOAD_BYTES + FRAMING_BYTES, schema: uploadSchema },
      async (request, reply) => {
        const { customerId } = principalOf(request);
        if (!request.isMultipart()) throw errors.unsupportedMediaType();
        if (Number(request.headers['content-length']) > MAX_UPLOAD_BYTES + FRAMING_BYTES) throw errors.mediaTooLarge();
        await deps.media.assertRoomForUpload(customerId);

        const gone = clientGone(request, reply);
        const release = await uploads.acquire(customerId, gone);
        // The place comes back as soon as the client leaves, whatever the parser does then.
        gone.addEventListener('abort', release, { once: true });
        try {
          gone.throwIfAborted();
          return await receive(deps.media, request, reply, customerId);
        } finally {
          release();
        }
      },
    );
  });
}
