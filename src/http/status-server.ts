// The status server of a worker-only process (`serve --role worker` with WORKER_STATUS_PORT):
// /healthz, /readyz and /metrics on their own port, so an orchestrator can probe and scrape a
// process without the API.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

import type { ReadinessCheck } from '../health/readiness.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import { registerMetricsRoute } from './routes/metrics-routes.js';
import type { Server } from './server.js';

export function createStatusServer(deps: {
  log: Logger;
  readiness: ReadinessCheck;
  metrics: { registry: Registry };
  metricsToken: string | null;
}): Server {
  const app = Fastify({
    loggerInstance: deps.log.child({ server: 'status' }),
    // Probes every few seconds would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as Server;
  registerHealthRoutes(app, deps);
  registerMetricsRoute(app, { metrics: deps.metrics, token: deps.metricsToken });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 'not_found' });
  });
  return app;
}
