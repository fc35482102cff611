// What the portal must not tell one customer about another's users, over HTTP against the real
// server: inviting an email another customer's user has answers exactly as a fresh email does
// (decision 0056), and a password reset request answers without waiting for the SMTP server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { backend, createTenant, eventually, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';
import { startSmtpSink } from './support/smtp-sink.js';

/** What an owner sees of an invitation: the redirect, then the page it leads to, tokens masked. */
async function inviteAnswer(c: PortalClient, email: string, ownerEmail: string) {
  const res = await c.submit('/portal/team', '/portal/team', { email, role: 'viewer' });
  const location = res.headers.get('location') ?? '';
  const next = location ? await c.get(location) : null;
  const mask = (s: string) =>
    s
      .replaceAll(email, '<email>')
      .replaceAll(ownerEmail, '<owner>')
      .replace(/[A-Za-z0-9_-]{20,}/g, '<token>')
      .replace(/\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?/g, '<time>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
  return {
    status: res.status,
    location: mask(location),
    contentType: res.headers.get('content-type'),
    body: mask(res.text),
    page: next && { status: next.status, body: mask(next.text) },
  };
}

describe('portal privacy between customers', () => {
  let svc: Service;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  const greetingDelayMs = 4000;

  beforeAll(async () => {
    // An SMTP server that greets only after a few seconds: a send that is awaited shows in the answer.
    sink = await startSmtpSink({ greetingDelayMs });
    svc = await startService({
      role: 'api',
      env: { SMTP_URL: sink.url, SMTP_FROM: 'ChatGate <no-reply@chatgate.test>' },
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await sink?.close();
  });

  it("inviting another customer's user answers as a fresh email does and leaves that user as they were", async () => {
    // Two customers alike (an owner each): one invites a fresh address, the other an address a
    // third customer's user has. What each owner sees must be the same, names and tokens aside.
    const mine = await createTenant(svc.url);
    const twin = await createTenant(svc.url);
    const theirs = await createTenant(svc.url);
    const owner = await createPortalUser(svc.url, mine.customerId, 'owner@mine.example');
    const twinOwner = await createPortalUser(svc.url, twin.customerId, 'owner@twin.example');
    const victim = await createPortalUser(svc.url, theirs.customerId, 'taken@theirs.example');
    const before = await svc.db.query('SELECT * FROM portal_users WHERE id = $1', [victim.id]);

    const c = new PortalClient(svc.url);
    expect((await c.login(owner.email)).status).toBe(303);
    const t = new PortalClient(svc.url);
    expect((await t.login(twinOwner.email)).status).toBe(303);
    const fresh = await inviteAnswer(c, 'fresh@nobody.example', owner.email);
    const taken = await inviteAnswer(t, victim.email, twinOwner.email);
    expect(fresh.status).toBe(303);
    // SMTP is set: the invitation is mailed (decision 0073), the page says so, the link is not shown.
    expect(fresh.page?.body).toContain('The invitation is sent by email');
    expect(taken).toEqual(fresh);

    // The other customer's user is unchanged and still logs in with their password.
    expect(await svc.db.query('SELECT * FROM portal_users WHERE id = $1', [victim.id])).toEqual(before);
    const theirClient = new PortalClient(svc.url);
    expect((await theirClient.login(victim.email, PASSWORD)).headers.get('location')).toBe('/portal');

    // The invitation is a separate account of this customer: its own password picks it at login,
    // the other customer's password still picks theirs.
    const invited = await c.submit('/portal/team', '/portal/team', { email: 'both@two.example', role: 'viewer' });
    const elsewhere = await createPortalUser(svc.url, theirs.customerId, 'both@two.example');
    expect(invited.status).toBe(303);
    const mailed = await eventually(async () =>
      sink.mails.find((m) => m.to.includes('both@two.example') && m.text.includes('/portal/invitation/')),
    );
    const link = /https?:\/\/[^\s/]+(\/portal\/invitation\/[A-Za-z0-9_-]+)/.exec(mailed.text)![1]!;
    const accept = new PortalClient(svc.url);
    const second = 'second-account-passphrase-9';
    expect((await accept.submit(link, link, { password: second })).status).toBe(303);
    const whoAmI = async (password: string) => {
      const x = new PortalClient(svc.url);
      expect((await x.login(elsewhere.email, password)).headers.get('location')).toBe('/portal');
      const [row] = await svc.db.query<{ customer_id: string }>(
        `SELECT u.customer_id FROM portal_sessions s JOIN portal_users u ON u.id = s.user_id
          WHERE u.email = $1 ORDER BY s.created_at DESC LIMIT 1`,
        [elsewhere.email],
      );
      return row!.customer_id;
    };
    expect(await whoAmI(second)).toBe(mine.customerId);
    expect(await whoAmI(PASSWORD)).toBe(theirs.customerId);
    // A reset request mails a link for each of the address's accounts.
    await new PortalClient(svc.url).submit('/portal/password-reset', '/portal/password-reset', {
      email: elsewhere.email,
    });
    const mails = await eventually(async () => {
      const m = sink.mails.filter((x) => x.to.includes(elsewhere.email) && x.text.includes('/portal/password-reset/'));
      return m.length === 2 && m;
    }, 30_000);
    expect(new Set(mails.map((m) => /\/portal\/password-reset\/\S+/.exec(m.text)?.[0])).size).toBe(2);

    // An email already in one's own team may still be reported: that is the customer's own data.
    const again = await c.submit('/portal/team', '/portal/team', { email: 'fresh@nobody.example', role: 'viewer' });
    expect(again.status).toBe(409);
  });

  // PGlite runs in this process: a slow statement there stops the test's own clock reading too.
  it.skipIf(backend === 'pglite')("answers a reset request before any of the account's database work", async () => {
    const t = await createTenant(svc.url);
    const user = await createPortalUser(svc.url, t.customerId, 'slow-db@reset.example');
    // A link's row that takes seconds to write: an answer that waited for it would show it.
    await svc.db.query(`CREATE FUNCTION slow_reset_link() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(3); RETURN NEW; END $$`);
    await svc.db.query(`CREATE TRIGGER slow_reset_link BEFORE INSERT ON portal_password_resets
      FOR EACH ROW EXECUTE FUNCTION slow_reset_link()`);
    try {
      const c = new PortalClient(svc.url);
      const form = await c.get('/portal/password-reset');
      const started = Date.now();
      const res = await c.post('/portal/password-reset', { _csrf: c.formToken(form.text), email: user.email });
      expect(res.status).toBe(303);
      expect(Date.now() - started).toBeLessThan(1500);
      await eventually(async () => sink.resetPath(user.email), 20_000);
    } finally {
      await svc.db.query('DROP TRIGGER slow_reset_link ON portal_password_resets');
      await svc.db.query('DROP FUNCTION slow_reset_link()');
    }
  });

  it('answers a reset request without waiting for the SMTP server, and the mail still arrives', async () => {
    const t = await createTenant(svc.url);
    const user = await createPortalUser(svc.url, t.customerId, 'slow-mail@reset.example');
    const c = new PortalClient(svc.url);
    const form = await c.get('/portal/password-reset');
    const started = Date.now();
    const res = await c.post('/portal/password-reset', { _csrf: c.formToken(form.text), email: user.email });
    const took = Date.now() - started;
    expect([res.status, res.headers.get('location')]).toEqual([303, '/portal/password-reset?done=sent']);
    // Generous: the server greets after 4 s; an answer that waited for it would take longer than 2 s.
    expect(took).toBeLessThan(greetingDelayMs / 2);
    const path = await eventually(async () => sink.resetPath(user.email), 20_000);
    expect(path).toMatch(/^\/portal\/password-reset\/[A-Za-z0-9_-]+$/);
  });
});
