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
 */
export async function closeServer(server: Server): Promise<void> {
  const sweep = setInterval(() => server.server.closeIdleConnections(), SWEEP_MS);
  try {
    await server.close();
  } finally {
    clearInterval(sweep);
  }
}
