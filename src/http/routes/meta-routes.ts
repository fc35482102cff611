// /healthz, /readyz, /openapi.json and the /docs reference page.
import type { Db } from '../../db/db.js';
import type { Server } from '../server.js';
import { renderReference } from './reference-page.js';

export function registerMetaRoutes(app: Server, deps: { db: Pick<Db, 'query'> }) {
  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));
  app.get('/readyz', hidden, async (_request, reply) => {
    try {
      await deps.db.query('SELECT 1');
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable', error: 'database unreachable' });
    }
  });
  app.get('/openapi.json', hidden, async () => app.swagger());
  app.get('/docs', hidden, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(renderReference(app.swagger() as never)),
  );
}
