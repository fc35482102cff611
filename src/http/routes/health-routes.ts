// /healthz (the process answers) and /readyz (it can do its work; 503 with the reasons if not),
// with the readiness details (the provider API version in use) either way.
// Served by the API server and, in a worker-only process, by its status server.
import type { ReadinessCheck } from '../../health/readiness.js';
import type { Server } from '../server.js';

/** What a 503 says first, kept from before the reasons list existed. */
const SUMMARY = {
  database: 'database unreachable',
  migrations: 'migrations pending',
  database_fault: 'database unavailable',
  write_path: 'write path stuck',
} as const;

export function registerHealthRoutes(app: Server, deps: { readiness: ReadinessCheck }) {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));
  app.get('/readyz', hidden, async (_request, reply) => {
    const readiness = await deps.readiness.check();
    const details = deps.readiness.details();
    if (readiness.ready) return { status: 'ready', ...details };
    return reply.code(503).send({
      status: 'unavailable',
      error: SUMMARY[readiness.reasons[0]!.check],
      reasons: readiness.reasons,
      ...details,
    });
  });
}
