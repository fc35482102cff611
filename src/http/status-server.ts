// The small listener of `serve --role worker` (no API there): /healthz, /readyz and /metrics on
// WORKER_STATUS_PORT (PORT when unset), so a worker is probed and scraped like an API process.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import type { Db } from '../db/db.js';
import { registerMetricsRoute } from './routes/metrics-routes.js';

export function createStatusServer(deps: {
  log: Logger;
  db: Pick<Db, 'query'>;
  metrics: { registry: Registry };
  metricsToken: string | null;
}): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    try {
      await deps.db.query('SELECT 1');
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', error: 'database unreachable' });
    }
  });
  registerMetricsRoute(app, { metrics: deps.metrics, token: deps.metricsToken });
  app.setNotFoundHandler((_request, reply) => void reply.code(404).send({ error: 'not_found' }));
  return app;
}
