// What Node's HTTP server answers by itself, before any route: a request it cannot parse (400), a
// head over 16 KiB (431), a request not received within BODY_READ_TIMEOUT_MS (408). Fastify's own
// handler writes these without `connection: close` and destroys the socket at once: a keep-alive
// client takes the connection back into its pool, and its next request there is reset before any
// answer. Here the answer says `connection: close`, in our error shape, and the socket is ended
// (the client reads the answer) and destroyed a moment later (a client that never closes its side
// cannot keep it).
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import type { FastifyBaseLogger } from 'fastify';

const LINGER_MS = 1000;
/** How long the answer to an earlier request on the socket may take before the error answer goes anyway. */
const PENDING_ANSWER_MS = 30_000;
const lingering = new WeakSet<Duplex>();

function answerFor(code: string | undefined): [number, string, Record<string, string>] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'Request Timeout', { error: 'request_timeout', message: 'the request did not arrive in time' }];
  if (code === 'HPE_HEADER_OVERFLOW')
    return [
      431,
      'Request Header Fields Too Large',
      { error: 'headers_too_large', message: 'the request line and headers must fit in 16 KiB' },
    ];
  return [400, 'Bad Request', { error: 'bad_request', message: 'malformed HTTP request' }];
}

export function answerClientError(log: FastifyBaseLogger) {
  return (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || socket.destroyed || lingering.has(socket)) return;
    lingering.add(socket);
    const [status, reason, body] = answerFor(err.code);
    // Never the error itself: Node attaches the bytes it could not parse (`rawPacket`), API keys,
    // cookies and Authorization headers included, which no field-name redaction can reach.
    log.debug({ code: err.code, reason: err.message, status }, 'client error');
    const text = JSON.stringify(body);
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      if (socket.writable)
        socket.end(
          `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
        );
      else socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    // A request before the bad bytes (pipelined on the same connection: a body longer than its
    // Content-Length, garbage after a request) may still be being answered: `_httpMessage` is the
    // response that owns the socket (a Node internal). That answer goes first, whole, then this
    // one: written in its place, the client would read our 400 as the answer to its request and
    // get none for the bad bytes. A time limit still applies (the answer's own, and the linger).
    // Only a request received whole: bytes that break one still arriving (a client gone mid-body:
    // HPE_INVALID_EOF_STATE) end it, and the socket is ended at once as before.
    const current = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (current && !current.writableFinished && current.req?.complete) {
      current.once('finish', answer);
      current.once('close', answer);
      setTimeout(answer, PENDING_ANSWER_MS).unref();
    } else answer();
  };
}
