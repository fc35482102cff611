// An answer given before the request body has all arrived (413, 401, 415, a malformed upload…)
// waits until the rest of the body is read and thrown away, up to a bound. Closing a socket with
// unread bytes makes the kernel reset the connection, and a client still writing its body then
// gets EPIPE/ECONNRESET instead of the answer; once the body has ended, the client reads the answer
// and the connection may even stay open. Over the bound the answer goes at once with
// `connection: close` (the reset may then still win: the documented limit).
import type { IncomingMessage } from 'node:http';

import type { FastifyReply, FastifyRequest } from 'fastify';

export type Drained = 'ended' | 'over' | 'closed';

/** Reads and discards the rest of `req`'s body, at most `bound` more bytes. */
export function drainBody(req: IncomingMessage, bound: number): Promise<Drained> {
  if (req.complete) return Promise.resolve('ended');
  if (req.destroyed) return Promise.resolve('closed');
  if (Number(req.headers['content-length']) > bound) return Promise.resolve('over');
  return new Promise((resolve) => {
    let seen = 0;
    const settle = (outcome: Drained) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > bound) settle('over');
    };
    const onEnd = () => settle('ended');
    const onClose = () => settle(req.complete ? 'ended' : 'closed');
    // Whoever read the body before (a multipart parser waiting for its consumer) lets go of it,
    // so that its back-pressure cannot hold the stream.
    req.unpipe();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
    req.resume();
  });
}

/** What is read and thrown away, at most, of the body of a request refused as unauthenticated. */
export const UNAUTHENTICATED_DRAIN_BYTES = 64 * 1024;

/**
 * onSend hook: an answer to a request whose body has not all arrived waits for it (at most twice
 * the route's body limit more), then keeps the connection; beyond that it closes the connection.
 * An unauthenticated caller (401) is worth no more than UNAUTHENTICATED_DRAIN_BYTES of reading:
 * a larger body (declared or sent) is not waited for, the answer goes at once with
 * `connection: close`. A `connection: close` set only because of the unread body (Fastify sets
 * one on every body parsing error) is dropped when the body was read to its end.
 */
export async function settleBodyBeforeAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const raw = request.raw;
  if (raw.complete) return payload;
  const bound = reply.statusCode === 401 ? UNAUTHENTICATED_DRAIN_BYTES : 2 * request.routeOptions.bodyLimit;
  const outcome = await drainBody(raw, bound);
  // A client that asked to close (or spoke HTTP/1.0) is told so: the connection ends after this answer.
  if (outcome === 'ended' && reply.raw.shouldKeepAlive) reply.removeHeader('connection');
  else void reply.header('connection', 'close');
  return payload;
}
