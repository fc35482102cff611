// GET /events/stream: the key's customer's events as Server-Sent Events (decision 0072). Who may
// listen, what a stream reads and its bounds are the event stream service's; this writes the frames.
import { Type } from '@sinclair/typebox';

import type { EventStreamService, StreamedEvent } from '../../webhooks/event-stream.js';
import { FileBody } from '../openapi/route-docs.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const schema = {
  operationId: 'streamEvents',
  summary: "The customer's events, live, as Server-Sent Events (for development: chatgate listen)",
  tags: ['webhooks'],
  security: [{ apiKey: [] }],
  headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 200 })) }),
  description: [
    "A `text/event-stream` of the key's customer's events, each as a webhook delivery would carry it:",
    '`id:` the eventId, `event:` the type, `data:` the envelope (`{eventId, type, createdAt, data}`) on one line.',
    'A live key gets every event of the customer, a sandbox key only those of sandbox messages, as webhook',
    'endpoints made with each do (`webhook.test` goes to its endpoint only and is never streamed).',
    'Live keys need a plan with webhooks (Basic, Pro); sandbox keys may listen on every plan. Not with a key scoped',
    'to one account. Events are streamed from when the stream opens, about a second after they happen;',
    '`Last-Event-ID` (an eventId of this customer) resumes after that event. A comment line (`: keepalive`)',
    'comes every 15 s; the stream ends after an hour (reconnect with Last-Event-ID); at most 3 streams per',
    'customer are open at once (`429 stream_limit`). Use `chatgate listen --forward-to URL` to have each event',
    'posted, signed as webhook deliveries are, to a local server.',
  ].join(' '),
  response: { 200: FileBody },
  'x-errors': ['feature_not_available', 'key_scope_insufficient', 'stream_limit'] as const,
};

const frame = (e: StreamedEvent) => `id: ${e.id}\nevent: ${e.type}\ndata: ${e.envelope}\n\n`;

export function registerEventStreamRoutes(app: Server, deps: { streams: EventStreamService }) {
  app.addHook('preClose', (done) => {
    deps.streams.endAll();
    done();
  });

  app.get('/events/stream', { schema }, async (request, reply) => {
    const opened = await deps.streams.open(callerOf(request), request.headers['last-event-id']);
    const res = reply.raw;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    reply.hijack();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
      connection: 'keep-alive',
    });
    /** Writes, waiting for the client to take what was written before (a slow reader holds the stream, not memory). */
    const write = (text: string) =>
      new Promise<void>((resolve) => {
        if (gone.signal.aborted || res.write(text)) return resolve();
        const go = () => {
          res.off('drain', go);
          gone.signal.removeEventListener('abort', go);
          resolve();
        };
        res.on('drain', go);
        gone.signal.addEventListener('abort', go, { once: true });
      });
    // The first line tells the client the stream is open (and the retry delay, for EventSource).
    await write(`: chatgate event stream${opened.resumed ? ' (resumed)' : ''}\nretry: 2000\n\n`);
    await deps.streams.run(opened, {
      event: (e) => write(frame(e)),
      heartbeat: () => write(': keepalive\n\n'),
      closed: gone.signal,
    });
    res.end();
  });
}
