// Closing the API server for a graceful shutdown.
import type { Server } from './server.js';

const SWEEP_MS = 100;

/**
 * Stops accepting, lets requests in flight finish, and does not wait for idle keep-alive
 * connections. Node closes the connections idle at the moment of close() only; one that finishes
 * its request later (a client or load balancer that keeps connections open) would hold the close
 * for the whole keep-alive timeout (72 s in Fastify), past SHUTDOWN_TIMEOUT_MS, and the forced
 * exit would then skip the workers' shutdown: sends in flight unrecorded, leases held.
 * Requests arriving on a busy connection meanwhile are answered 503 with `connection: close`.
 * Requests still in flight after `graceMs` have their connections closed.
 */
export async function closeServer(server: Server, graceMs = Infinity): Promise<void> {
  const sweep = setInterval(() => server.server.closeIdleConnections(), SWEEP_MS);
  // A request still being read after the grace (a slow or stalled upload, up to
  // BODY_READ_TIMEOUT_MS) is cut: its client sees the connection close and may retry; nothing
  // was accepted for it (an accepted send is committed before its answer is written).
  const cut = Number.isFinite(graceMs) ? setTimeout(() => server.server.closeAllConnections(), graceMs) : null;
  try {
    await server.close();
  } finally {
    clearInterval(sweep);
    if (cut) clearTimeout(cut);
  }
}
