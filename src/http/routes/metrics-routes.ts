// GET /metrics in Prometheus' text format, behind a bearer token when METRICS_TOKEN is set. Without
// a token the scrape is open, so the series labelled with customer, account or endpoint ids (which
// tell who the customers are and how much each sends) are left out; a token brings them back.
import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest();

/** Constant-time comparison of the Authorization header with `Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  return header !== undefined && crypto.timingSafeEqual(sha256(header), sha256(`Bearer ${token}`));
}

/** Labels that name a customer's objects: their series are served only behind METRICS_TOKEN. */
export const ID_LABELS = new Set(['customer_id', 'account_id', 'endpoint_id']);

/** The registry's exposition without the series labelled by ids (an open scrape). */
async function withoutIdSeries(registry: Registry): Promise<string> {
  const names = registry
    .getMetricsAsArray()
    .filter((m) => !((m as { labelNames?: string[] }).labelNames ?? []).some((l) => ID_LABELS.has(l)))
    .map((m) => (m as { name: string }).name);
  const parts = await Promise.all(names.map((n) => registry.getSingleMetricAsString(n)));
  return `${parts.filter((p) => p !== '').join('\n')}\n`;
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
    return reply
      .type(registry.contentType)
      .send(deps.token === null ? await withoutIdSeries(registry) : await registry.metrics());
  });
}
