// A check for tests: every JSON answer, as Fastify serialized it with the route's response schema
// (fast-json-stringify drops undeclared fields and coerces values to the declared types), must be
// what the handler returned. An answer that lost or changed anything fails with a 500 and the
// difference in the log, so a field a service returns but its route does not declare is caught.
import { isDeepStrictEqual } from 'node:util';

import type { FastifyInstance } from 'fastify';

const expected = new WeakMap<object, string>();

/** Where a serialized answer first differs from what the handler returned. */
function firstDifference(got: unknown, want: unknown, path = ''): string {
  if (typeof want === 'object' && want !== null && typeof got === 'object' && got !== null) {
    const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
    for (const key of keys) {
      const a = (got as Record<string, unknown>)[key];
      const b = (want as Record<string, unknown>)[key];
      if (!isDeepStrictEqual(a, b)) return firstDifference(a, b, `${path}/${key}`);
    }
  }
  return `${path || '/'}: sent ${JSON.stringify(got)}, the handler returned ${JSON.stringify(want)}`;
}

export function registerResponseCheck(app: Pick<FastifyInstance, 'addHook'>): void {
  app.addHook('preSerialization', async (request, _reply, payload) => {
    expected.set(request, JSON.stringify(payload));
    return payload;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const want = expected.get(request);
    if (want === undefined || typeof payload !== 'string' || reply.statusCode >= 500) return payload;
    expected.delete(request);
    const got: unknown = JSON.parse(payload);
    const returned: unknown = JSON.parse(want);
    if (isDeepStrictEqual(got, returned)) return payload;
    const problem = `${request.method} ${request.routeOptions.url}: the answer changed in serialization (declare the field in the route's response schema): ${firstDifference(got, returned)}`;
    request.log.error(problem);
    void reply.code(500);
    return JSON.stringify({ error: 'Internal server error', responseCheck: problem });
  });
}
