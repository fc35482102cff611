// The team's rules over HTTP against the real server (issue #27, part 2): the customer always
// keeps an active owner (two owners demoting each other at once leave one), nobody changes or
// disables themself, another customer's users are not found, viewers change nothing but their
// own password, and the password change's re-check is throttled like the reveal's and audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';

describe('portal team rules', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  let other: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PORTAL_LOGIN_MAX_FAILURES: '3' } });
    t = await createTenant(svc.url, { plan: 'pro' });
    other = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => svc?.stop());

  async function client(email: string) {
    const c = new PortalClient(svc.url);
    expect((await c.login(email)).status).toBe(303);
    return c;
  }
  const activeOwners = async (customerId: string) =>
    Number(
      (
        await svc.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM portal_users
            WHERE customer_id = $1 AND role = 'owner' AND disabled_at IS NULL AND password_hash IS NOT NULL`,
          [customerId],
        )
      )[0]!.n,
    );

  it('keeps audit times to the millisecond the page cursor carries, so no entry falls between two pages', async () => {
    for (let i = 0; i < 20; i++)
      await svc.db.query(`INSERT INTO portal_audit_log (customer_id, action) VALUES ($1, 'ms.check')`, [t.customerId]);
    const rows = await svc.db.query<{ sub_ms: number }>(
      `SELECT (extract(microseconds FROM at)::bigint % 1000)::int AS sub_ms FROM portal_audit_log
        WHERE customer_id = $1 AND action = 'ms.check'`,
      [t.customerId],
    );
    expect(rows).toHaveLength(20);
    expect(rows.filter((r) => Number(r.sub_ms) !== 0)).toEqual([]);
  });

  it('two owners demoting (or disabling) each other at once leave exactly one active owner', async () => {
    const a = await createPortalUser(svc.url, t.customerId, 'alice@race.example');
    const b = await createPortalUser(svc.url, t.customerId, 'bob@race.example');
    const [ca, cb] = [await client(a.email), await client(b.email)];
    const [ta, tb] = [
      ca.formToken((await ca.get('/portal/team')).text),
      cb.formToken((await cb.get('/portal/team')).text),
    ];
    const results = await Promise.all([
      ca.post(`/portal/team/${b.id}/role`, { _csrf: ta, role: 'viewer' }),
      cb.post(`/portal/team/${a.id}/disable`, { _csrf: tb }),
    ]);
    // One wins; the other is refused: by the team rule (409) when its request got past the role
    // check before the winner's change, or as a viewer / logged out (403, 303 to login) after it.
    const won = results.filter((r) => r.status === 303 && r.headers.get('location')?.startsWith('/portal/team'));
    expect(won).toHaveLength(1);
    const lost = results.find((r) => !won.includes(r))!;
    if (lost.status === 409) expect(lost.text).toContain('at least one active owner');
    else expect([403, 303]).toContain(lost.status);
    expect(await activeOwners(t.customerId)).toBe(1);
  });

  it('refuses changing or disabling oneself, and another customer’s user is not found', async () => {
    const me = await createPortalUser(svc.url, t.customerId, 'self@team.example');
    const stranger = await createPortalUser(svc.url, other.customerId, 'stranger@other.example');
    const c = await client(me.email);
    const role = await c.submit('/portal/team', `/portal/team/${me.id}/role`, { role: 'viewer' });
    expect(role.status).toBe(409);
    expect(role.text).toContain('You cannot change the role of yourself');
    const disable = await c.submit('/portal/team', `/portal/team/${me.id}/disable`, {});
    expect(disable.status).toBe(409);
    for (const action of ['role', 'disable', 'enable', 'invitation'])
      expect((await c.submit('/portal/team', `/portal/team/${stranger.id}/${action}`, { role: 'viewer' })).status).toBe(
        404,
      );
    expect((await c.get(`/portal/team/${stranger.id}/disable`)).status).toBe(404);
    const users = await svc.db.query<{ role: string; disabled_at: Date | null }>(
      'SELECT role, disabled_at FROM portal_users WHERE id = ANY($1::uuid[])',
      [[me.id, stranger.id]],
    );
    expect(users).toEqual([
      { role: 'owner', disabled_at: null },
      { role: 'owner', disabled_at: null },
    ]);
  });

  it('lets a viewer change their own password but nothing on the Team page', async () => {
    const v = await createPortalUser(svc.url, t.customerId, 'viewer@team.example', 'viewer');
    const target = await createPortalUser(svc.url, t.customerId, 'target@team.example', 'viewer');
    const c = await client(v.email);
    const token = c.formToken((await c.get('/portal/profile')).text);
    expect((await c.get('/portal/team')).status).toBe(403);
    for (const path of ['/portal/team', `/portal/team/${target.id}/role`, `/portal/team/${target.id}/disable`])
      expect((await c.post(path, { _csrf: token, email: 'x@team.example', role: 'owner' })).status).toBe(403);
    expect((await svc.db.query('SELECT 1 FROM portal_users WHERE email = $1', ['x@team.example'])).length).toBe(0);
    // Without the session's token the change is refused (CSRF), with it done.
    const next = 'some-other-passphrase-9931';
    expect(
      (await c.post('/portal/profile/password', { password: PASSWORD, newPassword: next, repeat: next })).status,
    ).toBe(403);
    const ok = await c.post('/portal/profile/password', {
      _csrf: token,
      password: PASSWORD,
      newPassword: next,
      repeat: next,
    });
    expect(ok.status).toBe(303);
    expect((await new PortalClient(svc.url).login(v.email, next)).status).toBe(303);
  });

  it('throttles the current-password re-check like the reveal’s, without locking out logging in; audits refusals', async () => {
    const u = await createPortalUser(svc.url, t.customerId, 'throttled@team.example');
    const c = await client(u.email);
    const next = 'a-brand-new-passphrase-5150';
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (
          await c.submit('/portal/profile', '/portal/profile/password', {
            password: 'wrong-password-123',
            newPassword: next,
            repeat: next,
          })
        ).status,
      );
    expect(statuses).toEqual([403, 403, 403, 429, 429]);
    const right = await c.submit('/portal/profile', '/portal/profile/password', {
      password: PASSWORD,
      newPassword: next,
      repeat: next,
    });
    expect(right.status).toBe(429);
    expect(right.text).toContain('Too many wrong passwords');
    // Logging in still works, with the old password (nothing changed).
    expect((await new PortalClient(svc.url).login(u.email)).status).toBe(303);
    const failed = await svc.db.query<{ target: string }>(
      `SELECT target FROM portal_audit_log WHERE customer_id = $1 AND action = 'user.password_change_failed'
          AND target = $2`,
      [t.customerId, u.email],
    );
    expect(failed).toHaveLength(6);
  });

  it('records the operator’s disable and password reset in the customer’s log, by the operator', async () => {
    const u = await createPortalUser(svc.url, other.customerId, 'op@other.example');
    expect((await call(svc.url, 'POST', `/admin/portal-users/${u.id}/reset-password`, { admin: true })).status).toBe(
      200,
    );
    expect((await call(svc.url, 'POST', `/admin/portal-users/${u.id}/disable`, { admin: true })).status).toBe(200);
    const rows = await svc.db.query<{ action: string; target: string; actor: string; user_id: string | null }>(
      `SELECT action, target, actor, user_id FROM portal_audit_log
        WHERE customer_id = $1 AND actor = 'operator' AND starts_with(target, $2) ORDER BY id`,
      [other.customerId, u.email],
    );
    expect(rows.map((r) => r.action)).toEqual(['user.invite', 'user.password_reset', 'user.disable']);
    // The operator's key and plan changes too, the key named by its masked form and name.
    const key = await call(svc.url, 'POST', `/admin/customers/${other.customerId}/api-keys`, {
      admin: true,
      body: { name: 'from the operator' },
    });
    expect(key.status).toBe(201);
    expect((await call(svc.url, 'DELETE', `/admin/api-keys/${key.body.id}`, { admin: true })).status).toBe(204);
    const plan = await call(svc.url, 'PATCH', `/admin/customers/${other.customerId}`, {
      admin: true,
      body: { plan: 'basic' },
    });
    expect(plan.status).toBe(200);
    const more = await svc.db.query<{ action: string; target: string }>(
      `SELECT action, target FROM portal_audit_log
        WHERE customer_id = $1 AND actor = 'operator' AND action IN ('key.create', 'key.revoke', 'customer.update')
        ORDER BY id`,
      [other.customerId],
    );
    const words = `${key.body.maskedKey} (from the operator)`;
    // (createTenant's own keys, made by the operator too, come first.)
    expect(more.filter((r) => r.action !== 'key.create' || r.target === words)).toEqual([
      { action: 'key.create', target: words },
      { action: 'key.revoke', target: words },
      { action: 'customer.update', target: 'plan: "basic"' },
    ]);
  });

  it('records an API key’s changes to webhooks and forwarding rules, naming the key, the URL and the rule', async () => {
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'https://hooks.example.com/api-old', events: ['message.status'] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const patch = { url: 'https://hooks.example.com/api-new' };
    expect((await call(svc.url, 'PATCH', `/webhook-endpoints/${id}`, { key: t.key, body: patch })).status).toBe(200);
    expect((await call(svc.url, 'DELETE', `/webhook-endpoints/${id}`, { key: t.key })).status).toBe(204);
    const rule = await call(svc.url, 'POST', '/forwarding-rules', {
      key: t.key,
      body: {
        name: 'orders',
        condition: { type: 'contains', pattern: 'order' },
        destination: { type: 'http', url: 'https://hooks.example.com/forward' },
      },
    });
    expect(rule.status).toBe(201);
    expect((await call(svc.url, 'DELETE', `/forwarding-rules/${rule.body.id}`, { key: t.key })).status).toBe(204);
    const rows = await svc.db.query<{ action: string; target: string; actor: string; user_id: string | null }>(
      `SELECT action, target, actor, user_id FROM portal_audit_log
        WHERE customer_id = $1 AND actor LIKE 'API key %' ORDER BY id`,
      [t.customerId],
    );
    expect(rows.map((r) => [r.action, r.target])).toEqual([
      ['webhook.create', 'https://hooks.example.com/api-old'],
      ['webhook.url_change', 'https://hooks.example.com/api-old → https://hooks.example.com/api-new'],
      ['webhook.delete', 'https://hooks.example.com/api-new'],
      ['inbox.rule_create', 'orders → https://hooks.example.com/forward'],
      ['inbox.rule_delete', 'orders → https://hooks.example.com/forward'],
    ]);
    expect(rows.every((r) => r.actor.startsWith(`API key ak_live_********${t.key.slice(-4)}`))).toBe(true);
    expect(rows.every((r) => r.user_id === null)).toBe(true);
  });
});
