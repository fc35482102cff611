import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, type Service, startService } from './support/harness.js';

describe('health, readiness and the API description', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('answers /healthz and /readyz', async () => {
    expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await call(svc.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await call(svc.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/messages',
        '/messages/{id}',
        '/messages/broadcast',
        '/broadcasts/{id}',
        '/broadcasts/{id}/cancel',
        '/chat-accounts',
        '/admin/customers',
      ]),
    );
    expect(
      res.body.paths['/chat-accounts/{accountId}/templates'].post.requestBody.content['application/json'].schema
        .properties.parameterFormat,
    ).toBeDefined();
    const send = res.body.paths['/messages'].post;
    expect(send.requestBody.content['application/json'].schema.properties.externalId).toMatchObject({
      minLength: 1,
      maxLength: 200,
    });
  });

  it('serves a reference page at /docs', async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('<code>/messages</code>');
    expect(html).toContain('Queue one message');
  });

  it('answers unknown routes with a JSON 404 and echoes a request id', async () => {
    const res = await call(svc.url, 'GET', '/nope', { headers: { 'x-request-id': 'req-abc.123' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
    expect(res.headers.get('x-request-id')).toBe('req-abc.123');
  });
});
