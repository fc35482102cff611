// /healthz, /readyz, /openapi.json and the /docs reference page.
import type { ReadinessCheck } from '../../health/readiness.js';
import type { Server } from '../server.js';
import { registerHealthRoutes } from './health-routes.js';
import { renderReference } from './reference-page.js';

export function registerMetaRoutes(app: Server, deps: { readiness: ReadinessCheck }) {
  const hidden = { schema: { hide: true } };
  registerHealthRoutes(app, deps);
  app.get('/openapi.json', hidden, async () => app.swagger());
  app.get('/docs', hidden, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(renderReference(app.swagger() as never)),
  );
}
