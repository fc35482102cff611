// What the HTTP edge adds to every answer and every operator request: no caching of answers that
// carry secrets, no content sniffing, and a throttle on wrong operator tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OPERATOR_MAX_FAILURES } from '../src/http/operator-auth.js';
import { MAX_PROVIDER_WEBHOOK_BYTES } from '../src/http/routes/provider-webhook-routes.js';
import { ADMIN_TOKEN, call, createTenant, type Service, startService, type Tenant } from './support/harness.js';

describe('answers carrying secrets', () => {
  let svc: Service;
  let t: Tenant;
  beforeAll(async () => {
    svc = await startService({ resolve: async () => [{ address: '93.184.216.34', family: 4 }] });
    t = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => svc?.stop());

  const noStore = (res: { headers: Headers }) => {
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  };

  it('say Cache-Control: no-store and nosniff: endpoint create and rotate, key create, user invitations', async () => {
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'https://hooks.example.com/in' },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    noStore(created);
    const rotated = await call(svc.url, 'POST', `/webhook-endpoints/${created.body.id}/rotate-secret`, { key: t.key });
    expect(rotated.status).toBe(200);
    noStore(rotated);
    const key = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/api-keys`, { admin: true, body: {} });
    expect(key.status).toBe(201);
    noStore(key);
    const user = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/users`, {
      admin: true,
      body: { email: 'owner@example.com' },
    });
    expect(user.status).toBe(201);
    noStore(user);
    const reset = await call(svc.url, 'POST', `/admin/portal-users/${user.body.id}/reset-password`, { admin: true });
    expect(reset.status).toBe(200);
    noStore(reset);
  });

  it('and so does every other API answer, errors included', async () => {
    noStore(await call(svc.url, 'GET', '/messages', { key: t.key }));
    noStore(await call(svc.url, 'GET', '/messages', { key: 'ak_live_wrong' }));
    noStore(await call(svc.url, 'GET', '/no-such-route', { key: t.key }));
  });
});

describe('operator token throttle', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => svc?.stop());

  const admin = (token: string) =>
    fetch(`${svc.url}/admin/customers`, { headers: { authorization: `Bearer ${token}` } });

  it(`refuses an address after ${OPERATOR_MAX_FAILURES} wrong tokens with 429 and Retry-After, whatever it sends`, async () => {
    expect((await admin(ADMIN_TOKEN)).status).toBe(200);
    for (let i = 0; i < OPERATOR_MAX_FAILURES; i++) {
      const res = await admin(`wrong-token-${i}-0123456789`);
      expect(res.status).toBe(401);
      await res.body?.cancel();
    }
    const refused = await admin('wrong-token-again-0123456789');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await refused.json()).toMatchObject({ error: 'too_many_attempts' });
    // The right token from that address waits too: a guess that happens to be right learns nothing.
    const right = await admin(ADMIN_TOKEN);
    expect(right.status).toBe(429);
    await right.body?.cancel();
    // The portal-user routes share the same throttle.
    const users = await fetch(`${svc.url}/admin/portal-users/00000000-0000-4000-8000-000000000000/disable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(users.status).toBe(429);
    await users.body?.cancel();
  });
});

describe('provider webhooks', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PROVIDER_APP_SECRET: 'provider-app-secret-0123456789' } });
  });
  afterAll(async () => svc?.stop());

  const post = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${svc.url}/provider/webhooks/app`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00', ...headers },
      body,
      duplex: 'half',
    } as RequestInit);

  it('refuse a body over 1 MiB with 413 before any signature check, declared or chunked', async () => {
    expect(MAX_PROVIDER_WEBHOOK_BYTES).toBe(1024 * 1024);
    const big = Buffer.alloc(MAX_PROVIDER_WEBHOOK_BYTES + 1, 0x20);
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect(await declared.json()).toEqual({ error: 'payload_too_large' });
    const chunks = [Buffer.alloc(700 * 1024, 0x20), Buffer.alloc(700 * 1024, 0x20)];
    const chunked = await post(
      new ReadableStream({
        pull(controller) {
          const next = chunks.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      }),
    );
    expect(chunked.status).toBe(413);
    await chunked.body?.cancel();
    // At the limit, the signature decides.
    const atLimit = await post(Buffer.alloc(MAX_PROVIDER_WEBHOOK_BYTES, 0x20));
    expect(atLimit.status).toBe(401);
    await atLimit.body?.cancel();
  });
});
