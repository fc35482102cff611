// GET /__emulator/send-counts: what a fault drill needs to judge sends without downloading every
// send: how many messages arrived more than once (by our message id, biz_opaque_callback_data),
// how many sends are open right now (arrived, not yet answered: the provider's side of "in
// flight"), and when sends arrived (to see when a worker stopped and started sending again).
import type { FastifyInstance } from 'fastify';

import { duplicateSends } from './emulator-controls.js';
import type { EmulatorState } from './emulator-state.js';

const SEND_ROUTES = new Set(['/:version/:phoneNumberId/messages', '/:version/:phoneNumberId/marketing_messages']);

export function registerSendCounts(app: FastifyInstance, state: EmulatorState): void {
  let open = 0;
  let peakOpen = 0;
  /** Arrival time (epoch ms) of every send request, in order; read marks count too. */
  const arrivals: number[] = [];
  const isSend = (method: string, url: string | undefined) =>
    method === 'POST' && url !== undefined && SEND_ROUTES.has(url);
  app.addHook('onRequest', async (request) => {
    if (!isSend(request.method, request.routeOptions.url)) return;
    arrivals.push(Date.now());
    open++;
    peakOpen = Math.max(peakOpen, open);
  });
  // onResponse runs for answered requests, onRequestAbort for those the client gave up on.
  const closed = async (request: { method: string; routeOptions: { url?: string } }) => {
    if (isSend(request.method, request.routeOptions.url)) open--;
  };
  app.addHook('onResponse', closed);
  app.addHook('onRequestAbort', closed);

  app.get<{ Querystring: { since?: string } }>('/__emulator/send-counts', async (request) => {
    const since = Number(request.query.since ?? 0) || 0;
    const duplicated = duplicateSends(state);
    const at = Date.now();
    // The reset of peakOpen lets a caller measure the peak over its own window.
    const peak = peakOpen;
    peakOpen = open;
    return {
      at,
      /** Sends accepted (recorded in GET /__emulator/sent). */
      received: state.sent.length,
      /** Distinct message ids among them. */
      distinct: new Set(state.sent.flatMap((s) => (s.messageId === null ? [] : [s.messageId]))).size,
      duplicated,
      /** Send requests arrived and not yet answered, now and at most since the previous call. */
      open,
      peakOpen: peak,
      /** Arrival times at or after `since` (epoch ms). */
      arrivals: arrivals.filter((t) => t >= since),
    };
  });
}
