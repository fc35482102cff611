import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { browserExecutable } from './support/browser-path.js';
import { call, createTestDatabase, type Service, startService } from './support/harness.js';
import { checkAgainstDocument } from './support/openapi-check.js';

/** What /readyz says of the default PROVIDER_API_VERSION (its state turns `expiring` 90 days before 2027-10-08). */
const PROVIDER_V23 = {
  apiVersion: 'v23.0',
  state: expect.stringMatching(/^(current|expiring)$/),
  released: '2025-05-29',
  expires: '2027-10-08',
  daysLeft: expect.any(Number),
};

describe('health, readiness and the API description', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('answers /healthz and /readyz, which shows the provider API version in use and its expiry', async () => {
    expect(await call(svc.url, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Ready although PROVIDER_BASE_URL points where nothing listens: the provider is not a reason.
    expect(await call(svc.url, 'GET', '/readyz')).toEqual(
      expect.objectContaining({ status: 200, body: { status: 'ready', provider: PROVIDER_V23 } }),
    );
  });

  it('shows the configured PROVIDER_API_VERSION in /readyz', async () => {
    const other = await startService({ role: 'api', env: { PROVIDER_API_VERSION: 'v25.0' } });
    try {
      expect((await call(other.url, 'GET', '/readyz')).body).toEqual({
        status: 'ready',
        provider: {
          apiVersion: 'v25.0',
          state: 'current',
          released: '2026-02-18',
          expires: '2028-07-29',
          daysLeft: expect.any(Number),
        },
      });
    } finally {
      await other.stop();
    }
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
            provider: PROVIDER_V23,
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

  it('gives every JSON request body at least one example, each valid against the body schema', async () => {
    const doc = (await call(svc.url, 'GET', '/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const missing: string[] = [];
    let bodies = 0;
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const media = op.requestBody?.content?.['application/json'];
        if (!media) continue;
        bodies++;
        const what = `${method.toUpperCase()} ${path} (${op.operationId})`;
        const examples = Object.values<any>(media.examples ?? {});
        if (examples.length === 0) missing.push(what);
        const validate = ajv.compile(media.schema);
        for (const example of examples)
          expect(validate(example.value), `${what} ${example.summary}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(18);
    expect(missing, "operations whose request body has no example (the route's 'x-examples')").toEqual([]);
  });

  it('describes every operation: operationId, summary, tags, answers and their error codes', async () => {
    const doc = (await call(svc.url, 'GET', '/openapi.json')).body;
    const ids = new Set<string>();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const what = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, what).toMatch(/^[a-z][A-Za-z]+$/);
        expect(ids.has(op.operationId), `${what}: operationId ${op.operationId} used twice`).toBe(false);
        ids.add(op.operationId);
        expect(op.summary, what).toBeTruthy();
        expect(op.tags?.length, what).toBeGreaterThan(0);
        const ok = Object.entries<any>(op.responses).filter(([s]) => s.startsWith('2'));
        // 'Default Response' is what @fastify/swagger writes for an answer nobody described:
        // declare the route's response schemas (src/http/openapi/route-docs.ts).
        expect(ok.length, what).toBeGreaterThan(0);
        for (const [, r] of ok) expect(r.description, what).not.toBe('Default Response');
        for (const s of ['400', '401', '500']) expect(op.responses[s], `${what} ${s}`).toBeDefined();
      }
    }
    expect(doc.paths['/messages'].post.responses['422'].content['application/json'].schema.anyOf).toEqual(
      expect.arrayContaining([{ $ref: '#/components/schemas/ChatAccountRequiredError' }]),
    );
    expect(doc.components.schemas.QuotaExceededError.required).toEqual(['error', 'limit', 'used', 'resetsAt']);
    for (const op of ['/messages', '/messages/broadcast', '/webhook-endpoints'])
      expect(
        Object.keys(doc.paths[op].post.requestBody.content['application/json'].examples ?? {}).length,
        op,
      ).toBeGreaterThan(0);
    expect(Object.keys(doc.webhooks)).toEqual([
      'message.status',
      'message.inbound',
      'sender.first_inbound',
      'webhook.test',
      'quota.threshold',
      'template.status',
      'account.messaging_limit',
    ]);
    const headers = doc.webhooks['message.status'].post.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(headers).toEqual(['header:x-svc-event', 'header:x-svc-event-id', 'header:x-svc-signature']);
  });

  it('serves the API reference at /docs: Swagger UI from our own assets, a strict CSP, the document', async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await res.text();
    // No inline script, nothing from another host.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(
      expect.arrayContaining([
        '/docs/static/swagger-ui.css',
        '/docs/static/swagger-ui-bundle.js',
        '/docs/static/swagger-ui-standalone-preset.js',
        '/docs/static/swagger-initializer.js',
      ]),
    );
    for (const asset of assets) {
      const a = await fetch(`${svc.url}${asset}`);
      expect(a.status, asset).toBe(200);
      const type = a.headers.get('content-type') ?? '';
      if (asset.endsWith('.js')) expect(type, asset).toMatch(/javascript/);
      if (asset.endsWith('.css')) expect(type, asset).toMatch(/text\/css/);
      expect(a.headers.get('content-security-policy'), asset).toBe(csp);
      await a.arrayBuffer();
    }
    // The page loads the document from ./json, which is /openapi.json.
    const init = await (await fetch(`${svc.url}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain("resolveUrl('./json')");
    const served = await (await fetch(`${svc.url}/docs/json`)).json();
    expect(served).toEqual((await call(svc.url, 'GET', '/openapi.json')).body);
  });

  it('renders the reference in a browser, without CSP violations', async () => {
    const browser = await chromium.launch({ executablePath: await browserExecutable(), args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(`${svc.url}/docs`);
      await page.getByText('Queue one message').first().waitFor({ timeout: 30_000 });
      await page.getByText('Webhooks').first().waitFor();
      expect(await page.getByText('message.status').count()).toBeGreaterThan(0);
      expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("the harness's call() rejects answers the document does not describe", async () => {
    const json = 'application/json; charset=utf-8';
    const check = (method: string, path: string, status: number, body: unknown) =>
      checkAgainstDocument(svc.url, method, path, { status, body, contentType: json });
    await expect(check('GET', '/chat-accounts', 200, { accounts: [] })).resolves.toBeUndefined();
    await expect(check('GET', '/chat-accounts', 200, { accounts: 'none' })).rejects.toThrow(/does not match/);
    await expect(check('GET', '/chat-accounts', 418, { error: 'teapot' })).rejects.toThrow(/not documented/);
    await expect(check('POST', '/messages', 422, { error: 'chat_account_required' })).resolves.toBeUndefined();
    await expect(check('POST', '/messages', 422, { error: 'made_up_code' })).rejects.toThrow(/does not match/);
    await expect(check('POST', '/messages', 429, { error: 'quota_exceeded' })).rejects.toThrow(/limit/);
    await expect(check('GET', '/healthz', 200, { anything: true })).resolves.toBeUndefined(); // hidden route
  });

  it('answers unknown routes with a JSON 404 and echoes a request id', async () => {
    const res = await call(svc.url, 'GET', '/nope', { headers: { 'x-request-id': 'req-abc.123' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found' });
    expect(res.headers.get('x-request-id')).toBe('req-abc.123');
  });
});
