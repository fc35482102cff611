// Portal roles (issue #37, decision 0073) against the real service, the provider emulator, a local
// SMTP sink and chromium: a support agent finds a customer's conversation, sees the inbound photo,
// replies and sees the reply delivered, and can neither see nor reach keys or webhooks; each
// role's rights over every area (read = GET its page, write = a POST the gate lets through or
// refuses with 403); an administrator manages the team but never an owner; invitations go by
// mail when SMTP is set.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { type Emulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';
import { startSmtpSink } from './support/smtp-sink.js';

const CUSTOMER = '16505557001';
const NO_SUCH = '00000000-0000-4000-8000-000000000000';
const ROLES = ['owner', 'admin', 'developer', 'support', 'viewer'] as const;
type Role = (typeof ROLES)[number];

/** The documented table (docs/portal.md): which roles read each page, and which write in each area. */
const READS: Record<string, Role[]> = {
  '/portal': [...ROLES],
  '/portal/messages': [...ROLES],
  '/portal/keys': ['owner', 'admin', 'developer', 'viewer'],
  '/portal/accounts': [...ROLES],
  '/portal/webhooks': ['owner', 'admin', 'developer', 'viewer'],
  '/portal/inbox': [...ROLES],
  '/portal/broadcasts': [...ROLES],
  '/portal/templates': [...ROLES],
  '/portal/team': ['owner', 'admin'],
  '/portal/audit': ['owner', 'admin'],
  '/portal/profile': [...ROLES],
};
const WRITES: { action: (accountId: string) => string; roles: Role[] }[] = [
  { action: () => `/portal/messages/${NO_SUCH}/cancel`, roles: ['owner', 'admin', 'developer', 'support'] },
  { action: () => `/portal/keys/${NO_SUCH}/revoke`, roles: ['owner', 'admin', 'developer'] },
  { action: () => `/portal/webhooks/${NO_SUCH}/delete`, roles: ['owner', 'admin', 'developer'] },
  { action: (a) => `/portal/conversations/${a}/%2B${CUSTOMER}/reply`, roles: ['owner', 'admin', 'support'] },
  { action: () => `/portal/inbox/rules/${NO_SUCH}/delete`, roles: ['owner', 'admin', 'developer'] },
  { action: () => `/portal/broadcasts/${NO_SUCH}/cancel`, roles: ['owner', 'admin'] },
  { action: () => `/portal/team/${NO_SUCH}/enable`, roles: ['owner', 'admin'] },
];

describe('portal roles', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let svc: Service;
  let emu: Emulator;
  let browser: Browser;
  let t: OfficialCustomer;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let endpointId: string;
  let keyId: string;
  const users = {} as Record<Role, { id: string; email: string }>;

  beforeAll(async () => {
    sink = await startSmtpSink();
    live = await startLiveService({
      UNSAFE_ALLOW_PRIVATE_URLS: 'true',
      SMTP_URL: sink.url,
      SMTP_FROM: 'ChatGate <no-reply@chatgate.test>',
    });
    ({ svc, emu } = live);
    t = await officialCustomer(svc.url, emu, { plan: 'pro' });
    for (const role of ROLES)
      users[role] = await createPortalUser(svc.url, t.customerId, `${role}@roles.example`, role);
    const endpoint = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['message.status'] },
    });
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.id as string;
    keyId = (await apiKeys())[0]!.id;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
    await sink?.close();
  });

  const apiKeys = async () =>
    (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true })).body.apiKeys as {
      id: string;
      name: string | null;
    }[];

  async function client(role: Role) {
    const c = new PortalClient(svc.url);
    expect((await c.login(users[role].email)).status).toBe(303);
    return c;
  }

  it('a support agent finds a conversation, sees the photo, replies and sees it delivered; keys and webhooks stay out of reach', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from: CUSTOMER,
        type: 'image',
        media: { dataBase64: png.toString('base64'), mimeType: 'image/png', caption: 'the dented lid' },
      }),
    });
    expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
    await eventually(async () => {
      const list = (await call(svc.url, 'GET', `/inbound-messages?from=%2B${CUSTOMER}`, { key: t.key })).body
        .inboundMessages as { media: { state: string } }[];
      return list.length === 1 && list[0]!.media.state === 'fetched';
    });

    const page = await loggedIn(browser, svc.url, users.support.email);
    const nav = page.getByRole('navigation', { name: 'Portal' });
    expect(await nav.getByRole('link', { name: 'Inbox' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    expect(await page.locator('a[href^="/portal/keys"], a[href^="/portal/webhooks"]').count()).toBe(0);
    expect(await text(page.locator('header .who'))).toContain('(support agent)');

    // Finds the customer in the inbox by their number, opens the conversation.
    await nav.getByRole('link', { name: 'Inbox' }).click();
    await page.getByLabel('From').fill(`+${CUSTOMER}`);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('tbody tr', { hasText: 'the dented lid' }).getByRole('link', { name: 'Conversation' }).click();
    const img = page.locator('ol.conversation img.thumb');
    expect(await img.getAttribute('alt')).toBe('the dented lid');
    await eventually(async () => (await img.evaluate((e) => (e as HTMLImageElement).naturalWidth)) > 0);
    await checkPage(page, 'roles-support-conversation');

    await page.getByLabel('Reply', { exact: true }).fill('Sorry about the lid: a new one ships today.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    expect(await text(page.getByRole('status'))).toContain('Sent');
    const sent = await eventually(async () =>
      emu.sent().find((s) => s.to === CUSTOMER && JSON.stringify(s.payload).includes('a new one ships today')),
    );
    expect(sent).toBeTruthy();
    await eventually(async () => {
      await page.reload();
      const last = page.locator('ol.conversation > li.out').last();
      return (await last.getAttribute('data-status')) === 'delivered' && (await text(last)).includes('ships today');
    });
    expect(await page.locator('a[href^="/portal/keys"], a[href^="/portal/webhooks"]').count()).toBe(0);

    // The overview says nothing of webhooks; every keys and webhooks address is refused with 403.
    await page.goto(`${svc.url}/portal`);
    expect(await page.locator('#wh-h, a[href^="/portal/webhooks"]').count()).toBe(0);
    for (const path of [
      '/portal/keys',
      `/portal/keys/${keyId}/revoke`,
      '/portal/webhooks',
      `/portal/webhooks/${endpointId}`,
      `/portal/webhooks/${endpointId}/delete`,
      `/portal/webhooks/${endpointId}/replay`,
    ]) {
      const r = await page.goto(`${svc.url}${path}`);
      expect(r!.status(), path).toBe(403);
      expect(await text(page.getByRole('alert')), path).toContain('your role is support agent');
      expect(await page.locator('body').innerText()).not.toContain('http://127.0.0.1:9/hook');
    }
    await checkPage(page, 'roles-support-refused');
    await page.context().close();

    // The same by form posts: creating or revealing a key, changing an endpoint, refused before anything.
    const c = await client('support');
    const token = c.formToken((await c.get('/portal/profile')).text);
    for (const [path, body] of [
      ['/portal/keys', { name: 'support key', password: PASSWORD }],
      [`/portal/keys/${keyId}/reveal`, { password: PASSWORD }],
      ['/portal/webhooks', { url: 'http://127.0.0.1:9/other', events: 'message.status', password: PASSWORD }],
      [`/portal/webhooks/${endpointId}/rotate-secret`, {}],
      [`/portal/webhooks/${endpointId}/test`, {}],
    ] as const)
      expect((await c.post(path, { _csrf: token, ...body })).status, path).toBe(403);
    expect((await apiKeys()).some((k) => k.name === 'support key')).toBe(false);
  }, 180_000);

  it('gives each role exactly the reads and writes of the documented table', async () => {
    for (const role of ROLES) {
      const c = await client(role);
      const home = await c.get('/portal/profile');
      const token = c.formToken(home.text);
      for (const [path, readers] of Object.entries(READS)) {
        const r = await c.get(path);
        expect(r.status, `${role} GET ${path}`).toBe(readers.includes(role) ? 200 : 403);
        // The navigation links exactly the pages the role reads.
        expect(home.text.includes(`href="${path}"`), `${role} link ${path}`).toBe(readers.includes(role));
      }
      for (const w of WRITES) {
        const path = w.action(t.accountIds[0]!);
        const r = await c.post(path, { _csrf: token, kind: 'text', text: 'hi', externalId: `roles-${role}` });
        if (w.roles.includes(role)) expect(r.status, `${role} POST ${path}`).not.toBe(403);
        else expect(r.status, `${role} POST ${path}`).toBe(403);
      }
    }
  }, 180_000);

  it('lets an administrator manage the team but never an owner; invitations go by mail with SMTP set', async () => {
    const admin = await client('admin');
    const team = await admin.get('/portal/team');
    const token = admin.formToken(team.text);
    // The invite form offers every role but owner.
    const invite = /<select id="invite-role"[\s\S]*?<\/select>/.exec(team.text)![0];
    expect([...invite.matchAll(/value="([a-z]+)"/g)].map((m) => m[1]).sort()).toEqual(
      ['admin', 'developer', 'support', 'viewer'].sort(),
    );
    expect(team.text).toContain('Only an owner manages an owner.');

    // Owners are out of an administrator's reach, by any form.
    const owner = users.owner.id;
    expect((await admin.post(`/portal/team/${owner}/role`, { _csrf: token, role: 'viewer' })).status).toBe(403);
    expect((await admin.post(`/portal/team/${owner}/disable`, { _csrf: token })).status).toBe(403);
    expect((await admin.post(`/portal/team/${users.viewer.id}/role`, { _csrf: token, role: 'owner' })).status).toBe(
      403,
    );
    expect(
      (await admin.post('/portal/team', { _csrf: token, email: 'boss@roles.example', role: 'owner' })).status,
    ).toBe(403);

    // Everyone else is: the viewer becomes a developer and reaches keys' forms.
    expect((await admin.post(`/portal/team/${users.viewer.id}/role`, { _csrf: token, role: 'developer' })).status).toBe(
      303,
    );
    const moved = new PortalClient(svc.url);
    await moved.login(users.viewer.email);
    expect((await moved.get('/portal/keys')).text).toContain('action="/portal/keys"');
    expect((await admin.post(`/portal/team/${users.viewer.id}/role`, { _csrf: token, role: 'viewer' })).status).toBe(
      303,
    );

    // An invitation is mailed (SMTP is set): the page says so and shows no link; the mailed link works.
    const sent = await admin.post('/portal/team', { _csrf: token, email: 'agent2@roles.example', role: 'support' });
    expect(sent.status).toBe(303);
    const after = await admin.get(sent.headers.get('location')!);
    expect(after.text).toContain('The invitation is sent by email');
    expect(after.text).not.toContain('/portal/invitation/');
    const mail = await eventually(async () => sink.mails.find((m) => m.to.includes('agent2@roles.example')));
    expect(mail.text).toContain(`${users.admin.email} invited you to the ChatGate portal as support agent`);
    const link = /https?:\/\/[^\s/]+(\/portal\/invitation\/[A-Za-z0-9_-]+)/.exec(mail.text)![1]!;
    const agent = new PortalClient(svc.url);
    const form = await agent.get(link);
    expect(form.status).toBe(200);
    expect((await agent.post(link, { _csrf: agent.formToken(form.text), password: PASSWORD })).status).toBe(303);
    expect((await agent.login('agent2@roles.example')).status).toBe(303);
    expect((await agent.get('/portal/keys')).status).toBe(403);
    const audit = await (await client('owner')).get('/portal/audit');
    expect(audit.text).toContain('agent2@roles.example (support)');
  }, 120_000);
});
