// Issue #27, "On a phone and in the dark" (decision 0052): every portal page, with content, in
// chromium at 1280 px and 390 px, each light and dark (the system's colour scheme); the content has
// 200-character names and URLs (issue #37: a key, a rule, a broadcast, a webhook URL, an
// externalId, a suppression's reason), and no page is wider than the screen. Each page passes
// axe with no violation at all, keyboard focus is visible, dark mode follows the system setting,
// and at 390 px the document never scrolls sideways (wide tables scroll inside their own box).
// A screenshot of each is kept under test-artifacts/screenshots/ (CI keeps the folder).
//
// A new portal page: add one entry to PAGES (its seeded data, if any, to `seed`).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { launchBrowser } from './support/browser.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const SHOTS = path.resolve('test-artifacts/screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const FROM = '16505557001';
const DAY_AGO = new Date(Date.now() - 86_400_000).toISOString().slice(0, 16);
const IN_A_MINUTE = new Date(Date.now() + 60_000).toISOString().slice(0, 16);

/** What the seeding made, for the pages' paths. */
type Seeded = {
  accountId: string;
  messageId: string;
  scheduledId: string;
  broadcastId: string;
  endpointId: string;
  deliveryId: string;
  inboundId: string;
  ruleId: string;
  keyId: string;
  invitationPath: string;
};

/** Every page of the portal (src/http/portal/*-routes.ts, GET routes), `status` when not 200. */
const PAGES: { name: string; path: (s: Seeded) => string; public?: true; status?: number }[] = [
  { name: 'login', path: () => '/portal/login', public: true },
  { name: 'invitation', path: (s) => s.invitationPath, public: true },
  { name: 'overview', path: () => '/portal' },
  { name: 'messages', path: () => '/portal/messages' },
  { name: 'messages-filtered', path: () => '/portal/messages?externalId=look&status=delivered' },
  { name: 'messages-error', path: () => '/portal/messages?status=no-such-status' },
  { name: 'message', path: (s) => `/portal/messages/${s.messageId}` },
  { name: 'message-cancel', path: (s) => `/portal/messages/${s.scheduledId}/cancel` },
  { name: 'keys', path: () => '/portal/keys' },
  { name: 'key-revoke', path: (s) => `/portal/keys/${s.keyId}/revoke` },
  { name: 'accounts', path: () => '/portal/accounts' },
  { name: 'webhooks', path: () => '/portal/webhooks' },
  { name: 'webhook', path: (s) => `/portal/webhooks/${s.endpointId}` },
  { name: 'webhook-rotate', path: (s) => `/portal/webhooks/${s.endpointId}/rotate-secret` },
  { name: 'webhook-delete', path: (s) => `/portal/webhooks/${s.endpointId}/delete` },
  {
    name: 'webhook-replay',
    path: (s) => `/portal/webhooks/${s.endpointId}/replay?since=${DAY_AGO}&until=${IN_A_MINUTE}`,
  },
  { name: 'webhook-delivery', path: (s) => `/portal/webhooks/${s.endpointId}/deliveries/${s.deliveryId}` },
  {
    name: 'webhook-deliveries-filtered',
    path: (s) => `/portal/webhooks/${s.endpointId}?eventType=message.status&status=succeeded`,
  },
  { name: 'webhook-events', path: () => '/portal/webhooks/events' },
  { name: 'suppressions', path: () => '/portal/suppressions' },
  {
    name: 'suppression-remove',
    path: (s) => `/portal/suppressions/remove?account=${s.accountId}&phone=%2B16505557999`,
  },
  { name: 'security', path: () => '/portal/account/security' },
  { name: 'team', path: () => '/portal/team' },
  { name: 'profile', path: () => '/portal/profile' },
  { name: 'inbox', path: () => '/portal/inbox' },
  { name: 'inbox-notice', path: () => '/portal/inbox?done=rule-created' },
  { name: 'inbound', path: (s) => `/portal/inbox/${s.inboundId}` },
  { name: 'sender', path: (s) => `/portal/inbox/sender?phone=%2B${FROM}&chatAccountId=${s.accountId}` },
  { name: 'conversation', path: (s) => `/portal/conversations/${s.accountId}/%2B${FROM}` },
  { name: 'rule-delete', path: (s) => `/portal/inbox/rules/${s.ruleId}/delete` },
  { name: 'broadcasts', path: () => '/portal/broadcasts' },
  { name: 'broadcast-new', path: () => '/portal/broadcasts/new' },
  { name: 'broadcast', path: (s) => `/portal/broadcasts/${s.broadcastId}` },
  { name: 'broadcast-cancel', path: (s) => `/portal/broadcasts/${s.broadcastId}/cancel` },
  { name: 'templates', path: () => '/portal/templates' },
  { name: 'audit', path: () => '/portal/audit' },
  { name: 'not-found', path: () => '/portal/no-such-page', status: 404 },
];

const MODES: { name: string; options: BrowserContextOptions }[] = [
  { name: 'light-1280', options: { viewport: { width: 1280, height: 900 }, colorScheme: 'light' } },
  { name: 'dark-1280', options: { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' } },
  {
    name: 'light-390',
    options: { viewport: { width: 390, height: 844 }, colorScheme: 'light', isMobile: true, hasTouch: true },
  },
  {
    name: 'dark-390',
    options: { viewport: { width: 390, height: 844 }, colorScheme: 'dark', isMobile: true, hasTouch: true },
  },
];

/** 200 characters, starting with `start` (names, references and reasons at the length that once widened pages). */
const long = (start: string) => `${start}${'x'.repeat(200 - start.length)}`;

type Violation = { id: string; impact: string; nodes: { target: string[] }[] };

async function axe(page: Page): Promise<string[]> {
  // The CSP forbids inline script: axe is evaluated through the DevTools protocol.
  if (!(await page.evaluate(`typeof window.axe === 'object'`))) await page.evaluate(AXE);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] })`)) as {
    violations: Violation[];
  };
  return result.violations.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** How many tables chromium's accessibility tree holds (the role a screen reader is given). */
async function tableRoles(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: { role?: { value?: string } }[] };
  await cdp.detach();
  return nodes.filter((n) => n.role?.value === 'table').length;
}

/** The computed outline of whatever has focus after one Tab from the top of the page. */
async function focusOutline(page: Page): Promise<{ tag: string; style: string; width: number }> {
  await page.keyboard.press('Tab');
  return page.evaluate(() => {
    const el = document.activeElement!;
    const s = getComputedStyle(el);
    return { tag: el.tagName, style: s.outlineStyle, width: parseFloat(s.outlineWidth) };
  });
}

describe('portal look: every page at 1280 and 390 px, light and dark, with 200-character names and URLs', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let svc: Service;
  let emu: Emulator;
  let receiver: Receiver;
  let browser: Browser;
  let t: OfficialCustomer;
  let seeded: Seeded;
  const owner = 'owner@look.example';

  async function seed(): Promise<Seeded> {
    const accountId = t.accountIds[0]!;
    const send = async (externalId: string, extra: Record<string, unknown> = {}) => {
      const res = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: {
          externalId,
          chatAccountId: accountId,
          to: { type: 'phone', phoneE164: `+${FROM}` },
          content: { type: 'text', text: `look ${externalId}: a message long enough to wrap on a phone's screen` },
          metadata: { order: 'A-2701', note: 'x'.repeat(120) },
          ...extra,
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.messageId as string;
    };
    // An inbound message first, so that the number is inside its reply window.
    const inbound = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from: FROM,
        name: 'Sheena Nelson',
        timestamp: Math.floor(Date.now() / 1000) - 60,
        message: { type: 'text', text: { body: 'Where is my order #2701? ' + 'Please answer soon. '.repeat(8) } },
      }),
    });
    expect(((await inbound.json()) as { delivered: boolean }).delivered).toBe(true);
    const messageId = await send('look-1');
    for (let i = 2; i <= 4; i++) await send(`look-${i}`);
    await send(long('look-long-'));
    const scheduledId = await send('look-later', { sendAt: new Date(Date.now() + 86_400_000).toISOString() });
    const b = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: 'look-broadcast',
        name: long('Spring sale '),
        chatAccountId: accountId,
        content: { type: 'text', text: 'Spring sale' },
        recipients: [1, 2, 3].map((i) => ({ phoneE164: `+1650555710${i}` })),
        sendAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    const rule = await call(svc.url, 'POST', '/forwarding-rules', {
      key: t.key,
      body: {
        name: long('orders '),
        condition: { type: 'regex', pattern: 'order #\\d+' },
        destination: { type: 'http', url: `${receiver.url}/forward` },
      },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);
    const endpoints = await call(svc.url, 'GET', '/webhook-endpoints', { key: t.key });
    const endpointId = endpoints.body.webhookEndpoints[0].id as string;
    // The endpoint's deliveries: events of the sends and of the inbound message reach the receiver.
    await receiver.waitForRequests(3);
    const deliveries = await call(svc.url, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { key: t.key });
    expect(deliveries.status, JSON.stringify(deliveries.body)).toBe(200);
    const deliveryId = deliveries.body.deliveries[0].id as string;
    // A long URL for the endpoint (the receiver answers on any path).
    const longUrl = `${receiver.url}/hooks/${'segment/'.repeat(30)}end?token=${'t'.repeat(60)}`;
    const patched = await call(svc.url, 'PATCH', `/webhook-endpoints/${endpointId}`, {
      key: t.key,
      body: { url: longUrl },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const suppressed = await call(svc.url, 'POST', `/chat-accounts/${accountId}/suppressions`, {
      key: t.key,
      body: { phone: '+16505557999', reason: long('Asked by phone: ') },
    });
    expect(suppressed.status, JSON.stringify(suppressed.body)).toBe(201);
    const inboundId = await eventually(async () => {
      const list = await call(svc.url, 'GET', '/inbound-messages', { key: t.key });
      return (list.body.inboundMessages?.[0]?.inboundMessageId as string | undefined) ?? false;
    });
    // Audit entries and a key to revoke: a key created through the portal (with the password).
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const created = await client.submit('/portal/keys', '/portal/keys', {
      name: long('look key '),
      password: PASSWORD,
    });
    expect(created.status).toBe(303);
    const keys = await client.get('/portal/keys');
    const keyId = /\/portal\/keys\/([0-9a-f-]{36})\/revoke/.exec(keys.text)![1]!;
    const invited = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/users`, {
      admin: true,
      body: { email: 'invited@look.example', role: 'viewer' },
    });
    const invitationPath = new URL(invited.body.invitationUrl as string).pathname;
    return {
      accountId,
      messageId,
      scheduledId,
      broadcastId: b.body.broadcastId,
      endpointId,
      deliveryId,
      inboundId,
      ruleId: rule.body.id,
      keyId,
      invitationPath,
    };
  }

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    ({ svc, emu } = live);
    await resetEmulator(emu);
    receiver = await startReceiver();
    t = await officialCustomer(svc.url, emu, { plan: 'pro', receiver });
    await createPortalUser(svc.url, t.customerId, owner);
    seeded = await seed();
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  for (const mode of MODES) {
    it(`${mode.name}: axe passes on every page, focus is visible, nothing scrolls sideways`, async () => {
      const context = await browser.newContext(mode.options);
      const page = await context.newPage();
      const problems: string[] = [];
      const scrollingTables: string[] = [];
      const visit = async (p: (typeof PAGES)[number]) => {
        const res = await page.goto(`${svc.url}${p.path(seeded)}`);
        expect(res?.status(), p.name).toBe(p.status ?? 200);
        await page.screenshot({ path: path.join(SHOTS, `${mode.name}-${p.name}.png`), fullPage: true });
        problems.push(...(await axe(page)).map((v) => `${p.name}: ${v}`));
        // On a phone (isMobile) a page wider than the screen widens the layout viewport too, so the
        // document's width is compared with the screen's, not with innerWidth alone.
        const screen = mode.options.viewport!.width;
        const [scrollWidth, innerWidth] = await page.evaluate(() => [
          document.documentElement.scrollWidth,
          window.innerWidth,
        ]);
        if (scrollWidth! > Math.min(innerWidth!, screen))
          problems.push(`${p.name}: the page is ${scrollWidth} px wide on a ${screen} px screen`);
        const boxScrolls = await page.evaluate(() =>
          [...document.querySelectorAll('table')].some((t) => t.scrollWidth > t.clientWidth),
        );
        if (boxScrolls) scrollingTables.push(p.name);
        // A table that scrolls in its box is still a table to assistive technology.
        const tables = await page.locator('table:visible').count(); // one in a closed <details> is in no tree
        if ((await tableRoles(page)) !== tables) problems.push(`${p.name}: a table lost its table role`);
        const focus = await focusOutline(page);
        if (focus.style === 'none' || focus.width < 2)
          problems.push(`${p.name}: no visible focus on ${focus.tag} (${focus.style} ${focus.width}px)`);
      };
      for (const p of PAGES.filter((x) => x.public)) await visit(p);

      await page.goto(`${svc.url}/portal/login`);
      await page.getByLabel('Email').fill(owner);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.waitForURL(`${svc.url}/portal`);
      // Dark mode follows the system setting: the page's own background, not the browser's.
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const light = background === 'rgb(255, 255, 255)';
      expect(light, background).toBe(mode.options.colorScheme !== 'dark');

      for (const p of PAGES.filter((x) => !x.public)) await visit(p);
      expect(problems).toEqual([]);
      // On the phone the messages table is wider than the screen: it scrolls in its own box.
      if (mode.options.viewport!.width <= 390) expect(scrollingTables).toContain('messages');
      await context.close();
    }, 600_000);
  }
});
