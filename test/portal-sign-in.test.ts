// Two-factor sign-in and password reset by email over HTTP (decision 0051), against the real
// server and a local SMTP sink: what a browser test cannot see — the TOTP secret sealed and the
// recovery codes hashed in the database, no session before the code, a login challenge used once
// and short-lived, a used code refused (replay), reset requests that answer alike for unknown
// addresses and are throttled per address, and the reset pages absent without SMTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, eventually, type Service, startService } from './support/harness.js';
import { createPortalUser, enrolTwoFactor, PASSWORD, PortalClient, totpCode } from './support/portal.js';
import { startSmtpSink } from './support/smtp-sink.js';

const sessionsOf = async (svc: Service, userId: string) =>
  (await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM portal_sessions WHERE user_id = $1', [userId]))[0]!
    .n;

describe('portal sign-in: two-factor and password reset (HTTP)', () => {
  let svc: Service;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let customerId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    svc = await startService({
      role: 'api',
      env: { PORTAL_LOGIN_MAX_FAILURES: '3', SMTP_URL: sink.url, SMTP_FROM: 'ChatGate <no-reply@chatgate.test>' },
    });
    customerId = (await createTenant(svc.url)).customerId;
  });
  afterAll(async () => {
    await svc?.stop();
    await sink?.close();
  });

  it('keeps the TOTP secret sealed and the recovery codes hashed; no session before the code; a code works once', async () => {
    const user = await createPortalUser(svc.url, customerId, 'sealed@sign-in.example');
    const client = new PortalClient(svc.url);
    expect((await client.login(user.email)).status).toBe(303);
    const { secret, codes } = await enrolTwoFactor(client);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);

    const [row] = await svc.db.query<{ secret_enc: string; last_step: string }>(
      'SELECT secret_enc, last_step FROM portal_totp WHERE user_id = $1',
      [user.id],
    );
    expect(row!.secret_enc).toMatch(/^v2\./);
    expect(row!.secret_enc).not.toContain(secret);
    const stored = await svc.db.query<{ code_hash: string }>(
      'SELECT code_hash FROM portal_recovery_codes WHERE user_id = $1',
      [user.id],
    );
    expect(stored).toHaveLength(10);
    for (const c of codes) expect(stored.map((s) => s.code_hash)).not.toContain(c);

    // Log in again: the password step gives no session, only the code step.
    const fresh = new PortalClient(svc.url);
    const step = await fresh.login(user.email);
    expect(step.status).toBe(303);
    expect(step.headers.get('location')).toBe('/portal/login/code');
    expect(await sessionsOf(svc, user.id)).toBe(1); // the first client's only
    expect((await fresh.get('/portal')).headers.get('location')).toBe('/portal/login');

    // The code of the step the enrolment used is refused (replay); the next step's code works, once.
    const used = Number(row!.last_step);
    const form = await fresh.get('/portal/login/code');
    const replay = await fresh.post('/portal/login/code', {
      _csrf: fresh.formToken(form.text),
      code: totpCode(secret, used * 30_000 + 1000),
    });
    expect(replay.status).toBe(401);
    expect(replay.text).toContain('Wrong code.');
    const next = totpCode(secret, (used + 1) * 30_000 + 1000);
    const ok = await fresh.post('/portal/login/code', { _csrf: fresh.formToken(replay.text), code: next });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/portal');
    expect((await fresh.get('/portal')).status).toBe(200);

    // The challenge is spent: the same cookie with a right recovery code finds nothing.
    const again = new PortalClient(svc.url);
    await again.login(user.email);
    const challenge = again.cookies.get('chatgate_login_step')!;
    const page = await again.get('/portal/login/code');
    expect(
      (await again.post('/portal/login/code', { _csrf: again.formToken(page.text), code: codes[0]! })).status,
    ).toBe(303);
    const reuse = new PortalClient(svc.url);
    reuse.cookies.set('chatgate_login_step', challenge);
    const reusePage = await reuse.get('/portal/login/code');
    expect(reusePage.headers.get('location')).toBe('/portal/login');
    const pre = await reuse.get('/portal/login');
    const spent = await reuse.post('/portal/login/code', { _csrf: reuse.formToken(pre.text), code: codes[1]! });
    expect(spent.status).toBe(401);
    expect(spent.text).toContain('expired or was used');
  });

  it('turning two-factor on takes the password again: a session alone cannot tie the account to another phone', async () => {
    const user = await createPortalUser(svc.url, customerId, 'stolen-session@sign-in.example');
    const client = new PortalClient(svc.url);
    expect((await client.login(user.email)).status).toBe(303);
    await expect(enrolTwoFactor(client, 'not-the-password-at-all')).rejects.toThrow(/confirm: 401/);
    const on = await svc.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM portal_totp WHERE user_id = $1 AND enabled_at IS NOT NULL',
      [user.id],
    );
    expect(on[0]!.n).toBe(0);
    const refused = await svc.db.query<{ action: string }>(
      "SELECT action FROM portal_audit_log WHERE action = 'two_factor.enable_failed' AND target = $1",
      [user.email],
    );
    expect(refused).toHaveLength(1);
    expect((await enrolTwoFactor(client)).codes).toHaveLength(10); // with the password it turns on
  });

  it('a login challenge expires', async () => {
    const user = await createPortalUser(svc.url, customerId, 'expiry@sign-in.example');
    const client = new PortalClient(svc.url);
    await client.login(user.email);
    const { codes } = await enrolTwoFactor(client);
    const other = new PortalClient(svc.url);
    await other.login(user.email);
    await svc.db.query(
      `UPDATE portal_login_challenges SET expires_at = now() - interval '1 second' WHERE user_id = $1`,
      [user.id],
    );
    const pre = await other.get('/portal/login');
    const late = await other.post('/portal/login/code', { _csrf: other.formToken(pre.text), code: codes[0]! });
    expect(late.status).toBe(401);
    expect(await sessionsOf(svc, user.id)).toBe(1);
  });

  it('answers a reset request alike for unknown addresses, mails a link only to a user, throttles per address', async () => {
    const user = await createPortalUser(svc.url, customerId, 'reset@sign-in.example');
    const client = new PortalClient(svc.url);
    const login = await client.get('/portal/login');
    expect(login.text).toContain('href="/portal/password-reset"');
    const known = await client.submit('/portal/password-reset', '/portal/password-reset', { email: user.email });
    const unknown = await client.submit('/portal/password-reset', '/portal/password-reset', {
      email: 'nobody@sign-in.example',
    });
    expect([known.status, known.headers.get('location')]).toEqual([303, '/portal/password-reset?done=sent']);
    expect([unknown.status, unknown.headers.get('location')]).toEqual([known.status, known.headers.get('location')]);
    const path = await eventually(async () => sink.resetPath(user.email));
    expect(sink.mails.some((m) => m.to.includes('nobody@sign-in.example'))).toBe(false);
    const mail = sink.mails.find((m) => m.to.includes(user.email))!;
    expect(mail.from).toBe('no-reply@chatgate.test');
    expect(mail.text).toContain(`https://chatgate.test${path}`);
    // Only the token's hash is stored.
    const token = path.split('/').pop()!;
    const rows = await svc.db.query<{ token_hash: string }>('SELECT token_hash FROM portal_password_resets');
    expect(rows.map((r) => r.token_hash)).not.toContain(token);

    // Three requests per email address in the window: the fourth is refused, known or not.
    for (const email of [user.email, 'nobody@sign-in.example']) {
      await client.submit('/portal/password-reset', '/portal/password-reset', { email });
      await client.submit('/portal/password-reset', '/portal/password-reset', { email });
      const refused = await client.submit('/portal/password-reset', '/portal/password-reset', { email });
      expect(refused.status).toBe(429);
      expect(refused.text).toContain('Too many password reset requests');
    }
    await svc.db.query('DELETE FROM portal_login_failures');
  });

  it('without SMTP_URL there is no reset link and the route says so', async () => {
    const plain = await startService({ role: 'api' });
    try {
      const client = new PortalClient(plain.url);
      expect((await client.get('/portal/login')).text).not.toContain('/portal/password-reset');
      const off = await client.get('/portal/password-reset');
      expect(off.status).toBe(404);
      expect(off.text).toContain('Password reset by email is not set up on this service');
      expect(
        (await client.post('/portal/password-reset', { _csrf: 'x'.repeat(30), email: 'a@b.example' })).status,
      ).toBe(403);
    } finally {
      await plain.stop();
    }
  });

  it('keeps the password: two-factor stays on after a reset', async () => {
    const user = await createPortalUser(svc.url, customerId, 'keeps@sign-in.example');
    const client = new PortalClient(svc.url);
    await client.login(user.email);
    await enrolTwoFactor(client);
    await client.submit('/portal/password-reset', '/portal/password-reset', { email: user.email });
    const path = await eventually(async () => sink.resetPath(user.email));
    const newPassword = 'another-long-passphrase-77';
    expect((await client.submit(path, path, { password: newPassword })).headers.get('location')).toBe(
      '/portal/login?done=reset',
    );
    expect(await sessionsOf(svc, user.id)).toBe(0);
    const step = await new PortalClient(svc.url).login(user.email, newPassword);
    expect(step.headers.get('location')).toBe('/portal/login/code');
    expect((await new PortalClient(svc.url).login(user.email, PASSWORD)).status).toBe(401);
  });

  it("the operator's reset-password turns two-factor off (the way back without phone and codes)", async () => {
    const user = await createPortalUser(svc.url, customerId, 'lost-phone@sign-in.example');
    const client = new PortalClient(svc.url);
    await client.login(user.email);
    await enrolTwoFactor(client);
    const reset = await call(svc.url, 'POST', `/admin/portal-users/${user.id}/reset-password`, { admin: true });
    expect(reset.status).toBe(200);
    const left = await svc.db.query(
      `SELECT 1 FROM portal_totp WHERE user_id = $1 UNION ALL SELECT 1 FROM portal_recovery_codes WHERE user_id = $1`,
      [user.id],
    );
    expect(left).toHaveLength(0);
  });

  it('a viewer turns two-factor on for themselves (their own sign-in is not read-only)', async () => {
    const user = await createPortalUser(svc.url, customerId, 'viewer@sign-in.example', 'viewer');
    const client = new PortalClient(svc.url);
    await client.login(user.email);
    const { codes } = await enrolTwoFactor(client);
    expect(codes).toHaveLength(10);
    expect((await new PortalClient(svc.url).login(user.email)).headers.get('location')).toBe('/portal/login/code');
  });
});
