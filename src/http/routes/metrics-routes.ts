// GET /metrics in Prometheus' text format, behind a bearer token when METRICS_TOKEN is set.
import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest();

/** Constant-time comparison of the Authorization header with `Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  return header !== undefined && crypto.timingSafeEqual(sha256(header), sha256(`Bearer ${token}`));
}

export function registerMetricsRoute(
  app: Pick<FastifyInstance, 'get'>,
  deps: { metrics: { registry: Registry }; token: string | null },
): void {
  const { registry } = deps.metrics;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (deps.token !== null && !bearerMatches(request.headers.authorization, deps.token)) {
      return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'unauthorized' });
    }
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
