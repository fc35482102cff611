// The portal's defences against a customer or a stranger (issue 21 items 3, 4 and 7, issue 27
// defects 3 and 4), over HTTP against the real server: the login throttle cannot be turned into a
// lock-out, TRUST_PROXY=true cannot be spoofed, a wrong password in a re-check never blocks
// logging in, no body is read before the session is checked, bodies stay within BODY_LIMIT_BYTES,
// date filters never answer 500, key creation and webhook URL changes take the password again
// (audited), and cookie security follows PUBLIC_BASE_URL only.
import net from 'node:net';
import { Writable } from 'node:stream';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createApp, createLogger } from '../src/app.js';
import { purgeOnce } from '../src/purge/purger.js';
import { call, createTenant, createTestDatabase, type Service, startService, testConfig } from './support/harness.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';

/** One login from a fresh client (its own pre-login token) with extra request headers. */
async function loginFrom(url: string, email: string, password: string, headers: Record<string, string> = {}) {
  const c = new PortalClient(url);
  const form = await c.get('/portal/login');
  const res = await c.post('/portal/login', { _csrf: c.formToken(form.text), email, password }, headers);
  return { status: res.status, text: res.text, client: c };
}

async function auditActions(svc: Service, customerId: string): Promise<{ action: string; target: string | null }[]> {
  return svc.db.query<{ action: string; target: string | null }>(
    'SELECT action, target FROM portal_audit_log WHERE customer_id = $1 ORDER BY id',
    [customerId],
  );
}

describe('portal login throttle: no lock-out from one address (behind a proxy)', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PORTAL_LOGIN_MAX_FAILURES: '3', TRUST_PROXY: 'loopback' } });
    t = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => svc?.stop());

  it('records nothing once refused: 40 wrong passwords from one address do not lock the user out elsewhere', async () => {
    const user = await createPortalUser(svc.url, t.customerId, 'hammered@example.com');
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      statuses.push(
        (await loginFrom(svc.url, user.email, 'wrong-password-123', { 'x-forwarded-for': '203.0.113.7' })).status,
      );
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(new Set(statuses.slice(3))).toEqual(new Set([429]));
    // The account-wide ceiling is 10 × 3 = 30, counted over distinct addresses: this one address is one.
    const rows = await svc.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM portal_login_failures WHERE subject = 'email:hammered@example.com'`,
    );
    expect(Number(rows[0]!.n)).toBe(3);
    expect((await loginFrom(svc.url, user.email, PASSWORD, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429);
    expect((await loginFrom(svc.url, user.email, PASSWORD, { 'x-forwarded-for': '198.51.100.20' })).status).toBe(303);
  });

  it('still has its ceiling: failures from more than 10 × the limit distinct addresses lock the account', async () => {
    const user = await createPortalUser(svc.url, t.customerId, 'distributed@example.com');
    for (let i = 1; i <= 31; i++)
      await loginFrom(svc.url, user.email, 'wrong-password-123', { 'x-forwarded-for': `192.0.2.${i}` });
    const locked = await loginFrom(svc.url, user.email, PASSWORD, { 'x-forwarded-for': '198.51.100.21' });
    expect(locked.status).toBe(429);
    expect(locked.text).toMatch(/Too many failed logins/);
  });

  it('cleans portal_login_failures on the purger’s schedule, not only at a successful login', async () => {
    await svc.db.query(
      `INSERT INTO portal_login_failures (subject, at) VALUES ('ip:192.0.2.200', now() - interval '2 hours'),
         ('email:nobody@example.com', now() - interval '16 minutes'), ('ip:192.0.2.201', now())`,
    );
    await purgeOnce(svc.db, 3600, true);
    const left = await svc.db.query<{ subject: string }>(
      `SELECT subject FROM portal_login_failures WHERE subject IN ('ip:192.0.2.200', 'email:nobody@example.com', 'ip:192.0.2.201')`,
    );
    expect(left.map((r) => r.subject)).toEqual(['ip:192.0.2.201']);
  });
});

describe('TRUST_PROXY=true', () => {
  let stop: () => Promise<void>;
  let url: string;
  const lines: string[] = [];
  beforeAll(async () => {
    const database = await createTestDatabase();
    const config = testConfig({ PORTAL_LOGIN_MAX_FAILURES: '3', TRUST_PROXY: 'true' });
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = await createApp(config, {
      db: database.db,
      role: 'api',
      log: createLogger({ logLevel: 'warn' }, sink),
    });
    url = (await app.start())!;
    stop = async () => {
      await app.stop();
      await database.drop();
    };
  });
  afterAll(async () => stop?.());

  it('warns at start-up and believes one proxy hop only: entries the client adds to X-Forwarded-For do not count', async () => {
    expect(lines.join('\n')).toMatch(/TRUST_PROXY=true is read as one proxy hop/);
    const t = await createTenant(url, { plan: 'pro' });
    const user = await createPortalUser(url, t.customerId, 'behind-proxy@example.com');
    // The proxy appends the address it saw (203.0.113.5); the attacker varies what comes before it.
    for (let i = 0; i < 3; i++)
      expect(
        (await loginFrom(url, user.email, 'wrong-password-123', { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.5` }))
          .status,
      ).toBe(401);
    const spoofed = await loginFrom(url, user.email, PASSWORD, { 'x-forwarded-for': '198.51.100.99, 203.0.113.5' });
    expect(spoofed.status).toBe(429);
  });
});

describe('portal password re-checks, bodies, dates and cookies', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  let owner: PortalClient;
  const email = 'rechecks@example.com';
  beforeAll(async () => {
    svc = await startService({
      role: 'api',
      env: { PORTAL_LOGIN_MAX_FAILURES: '3', BODY_LIMIT_BYTES: String(64 * 1024), UNSAFE_ALLOW_PRIVATE_URLS: 'true' },
    });
    t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, email);
    owner = new PortalClient(svc.url);
    expect((await owner.login(email)).status).toBe(303);
  });
  afterEach(async () => svc.db.query(`DELETE FROM portal_login_failures`));
  afterAll(async () => svc?.stop());

  it('keeps Secure, __Host- and HSTS for an https PUBLIC_BASE_URL even with UNSAFE_ALLOW_PRIVATE_URLS=true', async () => {
    const c = new PortalClient(svc.url);
    const res = await c.login(email);
    const cookie = res.headers.getSetCookie().find((x) => x.startsWith('__Host-chatgate_session='));
    expect(cookie).toMatch(/; Secure/);
    expect((await c.get('/portal')).headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
  });

  it('wrong passwords in Reveal never keep the user from logging in; reveal is throttled on its own, failures audited', async () => {
    const keys = (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true })).body
      .apiKeys as { id: string }[];
    const keyId = keys[0]!.id;
    const c = new PortalClient(svc.url);
    await c.login(email);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await c.submit('/portal/keys', `/portal/keys/${keyId}/reveal`, { password: 'wrong-password-123' })).status,
      );
    expect(statuses).toEqual([403, 403, 403, 429, 429]);
    expect((await c.submit('/portal/keys', `/portal/keys/${keyId}/reveal`, { password: PASSWORD })).status).toBe(429);
    // Logging in (from the same address) still works: no login failed.
    expect((await new PortalClient(svc.url).login(email)).status).toBe(303);
    // Every refused re-check is audited: five wrong passwords and the right one refused while throttled.
    const failed = (await auditActions(svc, t.customerId)).filter((a) => a.action === 'key.reveal_failed');
    expect(failed).toHaveLength(6);
    // Named by the key's masked form (and name), not its id (issue #27, part 2).
    expect(failed.every((a) => /^ak_live_\*{8}\w{4}/.test(a.target ?? ''))).toBe(true);
  });

  it('creates a key only with the password again (audited); a failed re-check creates nothing', async () => {
    const count = async () =>
      ((await call(svc.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true })).body.apiKeys as [])
        .length;
    const before = await count();
    const missing = await owner.submit('/portal/keys', '/portal/keys', { name: 'no password' });
    expect(missing.status).toBe(403);
    expect(missing.text).toContain('Wrong password.');
    const wrong = await owner.submit('/portal/keys', '/portal/keys', { name: 'wrong', password: 'wrong-password-123' });
    expect(wrong.status).toBe(403);
    expect(await count()).toBe(before);
    const ok = await owner.submit('/portal/keys', '/portal/keys', { name: 'confirmed', password: PASSWORD });
    // Post/redirect/get (issue #27.1): the new key is shown on the page the redirect names.
    expect(ok.status).toBe(303);
    expect(await count()).toBe(before + 1);
    const actions = (await auditActions(svc, t.customerId)).map((a) => a.action);
    expect(actions.filter((a) => a === 'key.create_failed')).toHaveLength(2);
    expect(actions).toContain('key.create');
  });

  it('changes a webhook URL only with the password again, audited with the old and new URL', async () => {
    const created = await owner.submit('/portal/webhooks', '/portal/webhooks', {
      url: 'https://hooks.example.com/old',
      events: ['message.status'],
    });
    expect(created.status).toBe(303);
    const listed = await owner.get(created.headers.get('location')!);
    const id = /href="\/portal\/webhooks\/([0-9a-f-]{36})"/.exec(listed.text)![1]!;
    const path = `/portal/webhooks/${id}`;
    const url = async () => (await call(svc.url, 'GET', `/webhook-endpoints/${id}`, { key: t.key })).body.url;

    const noPassword = await owner.submit(path, path, {
      url: 'https://evil.example.com/new',
      events: ['message.status'],
    });
    expect(noPassword.status).toBe(403);
    expect(await url()).toBe('https://hooks.example.com/old');
    // Other fields need no password.
    const described = await owner.submit(path, path, {
      url: 'https://hooks.example.com/old',
      description: 'just a label',
      events: ['message.status'],
      isActive: 'true',
    });
    expect(described.status).toBe(303);
    const moved = await owner.submit(path, path, {
      url: 'https://hooks.example.com/new',
      events: ['message.status'],
      isActive: 'true',
      password: PASSWORD,
    });
    expect(moved.status).toBe(303);
    expect(await url()).toBe('https://hooks.example.com/new');
    const audit = await auditActions(svc, t.customerId);
    expect(audit).toContainEqual({ action: 'webhook.url_change_failed', target: 'https://hooks.example.com/old' });
    expect(audit).toContainEqual({
      action: 'webhook.url_change',
      target: 'https://hooks.example.com/old → https://hooks.example.com/new',
    });
  });

  it('answers bad date filters with a validation message, never 500, and takes real ISO 8601', async () => {
    for (const path of [
      '/portal/inbox?since=garbage',
      '/portal/inbox?since=yesterday',
      '/portal/inbox?until=abc',
      '/portal/inbox?since=2026-02-30T10:00',
      '/portal/messages?since=yesterday',
      '/portal/messages?until=2026-13-01',
    ]) {
      const page = await owner.get(path);
      expect(page.status, path).toBeLessThan(500);
      expect(page.text, path).toContain('must be an ISO 8601 date-time');
    }
    for (const path of [
      '/portal/inbox?since=2026-11-26T06:00:00Z',
      '/portal/inbox?since=2026-11-26T06:00&until=2026-11-27T06:00:00.5%2B01:00',
      '/portal/inbox?since=2026-11-26',
      '/portal/messages?since=2026-11-26T06:00:00Z',
    ]) {
      const page = await owner.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toContain('must be an ISO 8601');
    }
  });

  it('keeps every portal body within BODY_LIMIT_BYTES and takes multipart only where a file is uploaded', async () => {
    const keysPage = await owner.get('/portal/keys');
    const token = owner.formToken(keysPage.text);
    const big = await owner.post('/portal/keys', { _csrf: token, name: 'x'.repeat(100 * 1024), password: PASSWORD });
    expect(big.status).toBe(413);

    const multipartTo = async (path: string, fields: Record<string, string>, file?: string) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      if (file !== undefined) form.append('csv', new Blob([file], { type: 'text/csv' }), 'r.csv');
      const res = await fetch(`${svc.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        body: form,
      });
      return { status: res.status, text: await res.text() };
    };
    // A form that uploads nothing is not parsed as multipart.
    expect((await multipartTo('/portal/keys', { _csrf: token, name: 'mp', password: PASSWORD })).status).toBe(415);
    const compose = await owner.get('/portal/broadcasts');
    const fields = {
      _csrf: owner.formToken(compose.text),
      chatAccountId: t.accountId,
      contentType: 'text',
      text: 'hi',
    };
    const small = await multipartTo('/portal/broadcasts/preview', fields, '+15551230001\n+15551230002\n');
    expect(small.status).toBe(200);
    expect(small.text).toContain('2 will be sent');
    const line = '+15551230001,an-external-id-that-fills-the-line\n';
    const tooBig = await multipartTo(
      '/portal/broadcasts/preview',
      fields,
      line.repeat(Math.ceil((80 * 1024) / line.length)),
    );
    expect(tooBig.status).toBe(413);
  });

  it('refuses an unauthenticated POST before reading its body: the answer comes while the body is still unsent', async () => {
    const { port } = new URL(svc.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const answer = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (chunk) => {
        got += chunk.toString('latin1');
        if (got.includes('\r\n\r\n')) resolve(got);
      });
      socket.on('close', () => resolve(got));
      socket.on('error', () => resolve(got));
    });
    const boundary = 'x-boundary-123';
    socket.write(
      `POST /portal/keys HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${'a'.repeat(16 * 1024)}`,
    );
    // Nothing more is sent: 50 MB were announced, 16 KB arrived. The answer must come anyway.
    const head = await Promise.race([
      answer,
      new Promise<string>((resolve) => setTimeout(() => resolve('no answer while the body was unsent'), 10_000)),
    ]);
    socket.destroy();
    expect(head).toMatch(/^HTTP\/1\.1 303 /);
    expect(head).toMatch(/location: \/portal\/login/i);
  });
});
