// The status server of a worker-only process (`serve --role worker` with WORKER_STATUS_PORT):
// /healthz and /readyz on their own port, so an orchestrator can probe a process without the API.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { Logger } from 'pino';

import type { ReadinessCheck } from '../health/readiness.js';
import { registerHealthRoutes } from './routes/health-routes.js';
import type { Server } from './server.js';

export function createStatusServer(deps: { log: Logger; readiness: ReadinessCheck }): Server {
  const app = Fastify({
    loggerInstance: deps.log.child({ server: 'status' }),
    // Probes every few seconds would drown the log.
    logController: new LogController({ disableRequestLogging: true }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as Server;
  registerHealthRoutes(app, deps);
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 'not_found' });
  });
  return app;
}
