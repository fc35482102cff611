// The portal without a browser: login and sessions, CSRF, cookie flags, tenant isolation (404),
// escaping of stored strings, roles. Real server, real database (PGlite or PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';

const XSS = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`;

describe('portal security', () => {
  let svc: Service;
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    svc = await startService({ env: { PORTAL_LOGIN_MAX_FAILURES: '3' } });
    a = await createTenant(svc.url, { plan: 'pro' });
    b = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, a.customerId, 'owner-a@example.com');
    await createPortalUser(svc.url, a.customerId, 'viewer-a@example.com', 'viewer');
    await createPortalUser(svc.url, b.customerId, 'owner-b@example.com');
  });
  afterAll(async () => svc?.stop());

  it('logs in, sets a Secure HttpOnly SameSite=Lax __Host- cookie, and answers with strict headers', async () => {
    const c = new PortalClient(svc.url);
    const res = await c.login('owner-a@example.com');
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((x) => x.startsWith('__Host-chatgate_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    const page = await c.get('/portal');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.text).not.toMatch(/<script>(?!<\/script>)/);
  });

  it('refuses a wrong password, then throttles the account with a clear message', async () => {
    const c = new PortalClient(svc.url);
    const wrong = await c.login('viewer-a@example.com', 'not-the-password-123');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong email or password.');
    await c.login('viewer-a@example.com', 'not-the-password-123');
    await c.login('viewer-a@example.com', 'not-the-password-123');
    const locked = await c.login('viewer-a@example.com', PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.text).toMatch(/Too many failed logins. Try again in \d+ minutes?\./);
    await svc.db.query(`DELETE FROM portal_login_failures`);
  });

  it('refuses state-changing requests without the CSRF token, or from another site', async () => {
    const c = new PortalClient(svc.url);
    await c.login('owner-a@example.com');
    const noToken = await c.post('/portal/keys', { name: 'x' });
    expect(noToken.status).toBe(403);
    expect(noToken.text).toContain('CSRF');
    const page = await c.get('/portal/keys');
    const crossSite = await c.post(
      '/portal/keys',
      { _csrf: c.formToken(page.text), name: 'x' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
    const loginNoToken = await new PortalClient(svc.url).post('/portal/login', {
      email: 'owner-a@example.com',
      password: PASSWORD,
    });
    expect(loginNoToken.status).toBe(403);
    const keys = await call(svc.url, 'GET', `/admin/customers/${a.customerId}/api-keys`, { admin: true });
    expect(keys.body.apiKeys.filter((k: any) => k.name === 'x')).toHaveLength(0);
  });

  it('issues a new session id at login (a planted id never becomes a session) and ends sessions everywhere', async () => {
    const c = new PortalClient(svc.url);
    const planted = 'planted-session-id-0123456789abcdef';
    c.cookies.set('__Host-chatgate_session', planted);
    await c.login('owner-a@example.com');
    const issued = c.cookies.get('__Host-chatgate_session')!;
    expect(issued).not.toBe(planted);
    const attacker = new PortalClient(svc.url);
    attacker.cookies.set('__Host-chatgate_session', planted);
    expect((await attacker.get('/portal')).status).toBe(303);
    const other = new PortalClient(svc.url);
    await other.login('owner-a@example.com');
    const before = other.cookies.get('__Host-chatgate_session')!;
    expect((await c.submit('/portal', '/portal/logout-everywhere', {})).status).toBe(303);
    const stale = new PortalClient(svc.url);
    stale.cookies.set('__Host-chatgate_session', before);
    expect((await stale.get('/portal')).status).toBe(303);
  });

  it("answers 404 for another customer's ids", async () => {
    const cb = new PortalClient(svc.url);
    await cb.login('owner-b@example.com');
    const sent = await call(svc.url, 'POST', '/messages', {
      key: b.sandboxKey,
      body: {
        externalId: 'b-1',
        to: { type: 'phone', phoneE164: '+15551230000' },
        content: { type: 'text', text: 'hi' },
      },
    });
    const bKeys = (await call(svc.url, 'GET', `/admin/customers/${b.customerId}/api-keys`, { admin: true })).body
      .apiKeys;
    const ep = await cb.submit('/portal/webhooks', '/portal/webhooks', {
      url: 'https://example.com/hook',
      events: ['message.status'],
    });
    expect(ep.status).toBe(303);
    const epId = /href="\/portal\/webhooks\/([0-9a-f-]{36})"/.exec((await cb.get('/portal/webhooks')).text)![1]!;

    const ca = new PortalClient(svc.url);
    await ca.login('owner-a@example.com');
    expect((await ca.get(`/portal/messages/${sent.body.messageId}`)).status).toBe(404);
    expect((await ca.get(`/portal/webhooks/${epId}`)).status).toBe(404);
    expect((await ca.get(`/portal/keys/${bKeys[0].id}/revoke`)).status).toBe(404);
    expect((await ca.submit('/portal/keys', `/portal/keys/${bKeys[0].id}/revoke`, {})).status).toBe(404);
    expect((await ca.submit('/portal/keys', `/portal/keys/${bKeys[0].id}/reveal`, { password: PASSWORD })).status).toBe(
      404,
    );
    expect((await ca.submit('/portal/webhooks', `/portal/webhooks/${epId}/rotate-secret`, {})).status).toBe(404);
    // A scope that is not even a UUID is no account of theirs either: the API's error, not a 500.
    const badScope = await ca.submit('/portal/keys', '/portal/keys', {
      name: 'scoped',
      chatAccountId: 'not-a-uuid',
      password: PASSWORD,
    });
    expect(badScope.status).toBeLessThan(500);
    // In words, not the raw code (issue #27.5).
    expect(badScope.text).toContain('Invalid chat account.');
    expect((await ca.get(`/portal/broadcasts/${sent.body.messageId}`)).status).toBe(404);
    const still = (await call(svc.url, 'GET', '/messages', { key: b.key })).status;
    expect(still).toBe(200);
  });

  it('renders stored strings inert (key name, metadata, externalId, endpoint description, account name)', async () => {
    await call(svc.url, 'PATCH', `/admin/chat-accounts/${a.accountId}`, { admin: true, body: { displayName: XSS } });
    const c = new PortalClient(svc.url);
    await c.login('owner-a@example.com');
    await c.submit('/portal/keys', '/portal/keys', { name: XSS, templateAccess: 'none', password: PASSWORD });
    const sent = await call(svc.url, 'POST', '/messages', {
      key: a.sandboxKey,
      body: {
        externalId: XSS,
        to: { type: 'phone', phoneE164: '+15551230000' },
        content: { type: 'text', text: XSS },
        metadata: { note: XSS },
      },
    });
    expect(sent.status).toBe(201);
    await c.submit('/portal/webhooks', '/portal/webhooks', {
      url: 'https://example.com/x',
      description: XSS,
      events: ['message.status'],
    });
    for (const path of [
      '/portal',
      '/portal/keys',
      '/portal/messages',
      `/portal/messages/${sent.body.messageId}`,
      '/portal/webhooks',
      '/portal/accounts',
      '/portal/inbox',
      '/portal/broadcasts',
      '/portal/templates',
    ]) {
      const page = await c.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain('<script>alert');
      expect(page.text, path).not.toContain('<img src=x');
    }
    const detail = await c.get(`/portal/messages/${sent.body.messageId}`);
    expect(detail.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('lets a viewer read but not act (no create, reveal, revoke)', async () => {
    const v = new PortalClient(svc.url);
    expect((await v.login('viewer-a@example.com')).status).toBe(303);
    const keys = await v.get('/portal/keys');
    expect(keys.status).toBe(200);
    expect(keys.text).not.toContain('Reveal</button>');
    const aKeys = (await call(svc.url, 'GET', `/admin/customers/${a.customerId}/api-keys`, { admin: true })).body
      .apiKeys;
    const token = v.formToken(keys.text);
    expect((await v.post('/portal/keys', { _csrf: token, name: 'viewer' })).status).toBe(403);
    expect((await v.post(`/portal/keys/${aKeys[0].id}/reveal`, { _csrf: token, password: PASSWORD })).status).toBe(403);
    expect((await v.post(`/portal/keys/${aKeys[0].id}/revoke`, { _csrf: token })).status).toBe(403);
    const after = (await call(svc.url, 'GET', `/admin/customers/${a.customerId}/api-keys`, { admin: true })).body
      .apiKeys;
    expect(after.find((k: any) => k.id === aKeys[0].id).revokedAt).toBeNull();
  });

  it('refuses in the webhook form what the API refuses, with the same problems (one validator)', async () => {
    const bad = [
      { url: 'https://hooks.example.com/x', events: ['message.bogus'] },
      { url: 'https://hooks.example.com/x', events: [] as string[] },
      { url: 'https://hooks.example.com/x', events: ['message.status'], description: 'd'.repeat(501) },
    ];
    const c = new PortalClient(svc.url);
    await c.login('owner-a@example.com');
    for (const body of bad) {
      const api = await call(svc.url, 'POST', '/webhook-endpoints', { key: a.key, body });
      expect(api.status).toBe(400);
      const details = api.body.details as { path: string; message: string }[];
      expect(details.length).toBeGreaterThan(0);
      const form = await c.submit('/portal/webhooks', '/portal/webhooks', {
        url: body.url,
        events: body.events,
        ...(body.description !== undefined ? { description: body.description } : {}),
      });
      expect(form.status).toBe(400);
      // The API's problems in the form's words: no raw code (issue #27.5), each message shown.
      expect(form.text).not.toContain('validation_error');
      for (const d of details) {
        expect(form.text).toContain(d.message.replaceAll("'", '&#39;').replaceAll('"', '&quot;'));
      }
    }
    const listed = await call(svc.url, 'GET', '/webhook-endpoints', { key: a.key });
    expect((listed.body.webhookEndpoints as { url: string }[]).map((e) => e.url)).not.toContain(
      'https://hooks.example.com/x',
    );
  });
});

describe('portal login throttle (no TRUST_PROXY)', () => {
  let svc: Service;
  let b: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PORTAL_LOGIN_MAX_FAILURES: '3' } });
    b = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => svc?.stop());

  /** One login from a fresh client (its own pre-login token), with extra request headers. */
  const loginFrom = async (email: string, password: string, headers: Record<string, string> = {}) => {
    const c = new PortalClient(svc.url);
    const form = await c.get('/portal/login');
    return c.post('/portal/login', { _csrf: c.formToken(form.text), email, password }, headers);
  };

  it('ignores X-Forwarded-For without TRUST_PROXY: a spoofed header does not get past the throttle', async () => {
    const user = await createPortalUser(svc.url, b.customerId, 'spoof-b@example.com');
    for (let i = 0; i < 3; i++)
      expect((await loginFrom(user.email, 'wrong-password-123', { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(
        401,
      );
    const spoofed = await loginFrom(user.email, PASSWORD, { 'x-forwarded-for': '198.51.100.9' });
    expect(spoofed.status).toBe(429);
  });

  it('counts parallel wrong passwords before checking any: at most the limit get a password check', async () => {
    const user = await createPortalUser(svc.url, b.customerId, 'parallel-b@example.com');
    const results = await Promise.all(Array.from({ length: 8 }, () => loginFrom(user.email, 'not-the-password-123')));
    const statuses = results.map((r) => r.status);
    // The limit is 3 (PORTAL_LOGIN_MAX_FAILURES): at most 3 reach a password check (fewer when
    // attempts recorded later are counted first), the others are throttled; none gets past both.
    const checked = statuses.filter((st) => st === 401).length;
    expect(checked).toBeGreaterThanOrEqual(1);
    expect(checked).toBeLessThanOrEqual(3);
    expect(statuses.filter((st) => st === 429)).toHaveLength(8 - checked);
    // Refused attempts are taken back, so the window holds exactly the checked ones: the rest of
    // the limit is still there for sequential tries, and then even the right password is refused.
    for (let i = checked; i < 3; i++) expect((await loginFrom(user.email, 'not-the-password-123')).status).toBe(401);
    expect((await loginFrom(user.email, 'not-the-password-123')).status).toBe(429);
    expect((await loginFrom(user.email, PASSWORD)).status).toBe(429);
  });
});

describe('portal login behind a proxy (TRUST_PROXY)', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PORTAL_LOGIN_MAX_FAILURES: '3', TRUST_PROXY: 'loopback' } });
    t = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => svc?.stop());

  const loginFrom = async (email: string, password: string, client: string) => {
    const c = new PortalClient(svc.url);
    const form = await c.get('/portal/login');
    return c.post('/portal/login', { _csrf: c.formToken(form.text), email, password }, { 'x-forwarded-for': client });
  };

  it('throttles the attacker’s address, not the user logging in from elsewhere', async () => {
    const user = await createPortalUser(svc.url, t.customerId, 'proxied@example.com');
    for (let i = 0; i < 3; i++)
      expect((await loginFrom(user.email, 'wrong-password-123', '203.0.113.5')).status).toBe(401);
    expect((await loginFrom(user.email, PASSWORD, '203.0.113.5')).status).toBe(429);
    // The user, from another address (as the proxy reports it), still logs in.
    expect((await loginFrom(user.email, PASSWORD, '198.51.100.7')).status).toBe(303);
  });
});
