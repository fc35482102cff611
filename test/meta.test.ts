import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTestDatabase, type Service, startService } from './support/harness.js';

describe('health, readiness and the API description', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('answers /healthz and /readyz', async () => {
    expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Ready although PROVIDER_BASE_URL points where nothing listens: the provider is not a reason.
    expect(await call(svc.url, 'GET', '/readyz')).toEqual(
      expect.objectContaining({ status: 200, body: { status: 'ready' } }),
    );
  });

  it('says which migrations are pending, and is ready again once they are applied', async () => {
    const [last] = await svc.db.query<{ name: string; checksum: string }>(
      'SELECT name, checksum FROM schema_migrations ORDER BY name DESC LIMIT 1',
    );
    await svc.db.query('DELETE FROM schema_migrations WHERE name = $1', [last!.name]);
    try {
      expect(await call(svc.url, 'GET', '/readyz')).toMatchObject({
        status: 503,
        body: {
          status: 'unavailable',
          error: 'migrations pending',
          reasons: [{ check: 'migrations', pending: [last!.name] }],
        },
      });
      expect((await call(svc.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await svc.db.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [
        last!.name,
        last!.checksum,
      ]);
    }
    expect(await call(svc.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
  });

  it('says the database is unavailable when it is', async () => {
    const database = await createTestDatabase();
    const other = await startService({ role: 'api', database });
    try {
      expect((await call(other.url, 'GET', '/readyz')).status).toBe(200);
      await database.db.close();
      expect(await call(other.url, 'GET', '/readyz')).toEqual(
        expect.objectContaining({
          status: 503,
          body: {
            status: 'unavailable',
            error: 'database unreachable',
            reasons: [{ check: 'database', error: 'unreachable' }],
          },
        }),
      );
      expect((await call(other.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      await other.app.stop().catch(() => {}); // its database is gone: releasing what it held fails
      await database.drop().catch(() => {});
    }
  });

  it('serves /healthz and /readyz on WORKER_STATUS_PORT in a worker-only process, and nothing else', async () => {
    const worker = await startService({ role: 'worker', env: { WORKER_STATUS_PORT: '0' } });
    try {
      expect(worker.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await call(worker.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await call(worker.url, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
      expect(await call(worker.url, 'GET', '/messages')).toMatchObject({ status: 404, body: { error: 'not_found' } });
    } finally {
      await worker.stop();
    }
    const silent = await startService({ role: 'worker' });
    try {
      expect(silent.url).toBe('');
    } finally {
      await silent.stop();
    }
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
