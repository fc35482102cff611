// Issue #27, part 1, in chromium: every state-changing form of the portal answers with a redirect
// (post/redirect/get), so a reload after it repeats nothing; a secret shown once is shown on the
// page the redirect leads to, read once from the server and gone on reload (never in the URL).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { verifyWebhookSignature } from '../src/webhooks/signature.js';
import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { startLiveService } from './support/emulator.js';
import { call, createTenant } from './support/harness.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

describe('portal: a reload after each state-changing action does nothing twice', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let receiver: Receiver;
  let browser: Browser;
  let url: string;
  let pro: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@reload.example';

  beforeAll(async () => {
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    url = live.svc.url;
    receiver = await startReceiver();
    pro = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, pro.customerId, owner);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  /** The page after a form landed on a GET address (not the POST's), and a reload of it. */
  async function landedOnGet(page: Page, path: RegExp) {
    expect(new URL(page.url()).pathname).toMatch(path);
    const res = await page.reload();
    expect(res!.request().method()).toBe('GET');
    expect(res!.status()).toBe(200);
  }

  it('creates a key and reveals it: the key is shown once, a reload neither repeats nor shows it', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/keys`);
    const rows = page.locator('tbody tr');
    const before = await rows.count();
    await page.getByLabel('Name').fill('reload test');
    await page.getByLabel('Your password (to confirm)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await text(page.locator('#shown-key'));
    expect(key).toMatch(/^ak_live_/);
    expect(page.url()).not.toContain(key);
    expect(await rows.count()).toBe(before + 1);
    await checkPage(page, '30-key-created-once');

    await landedOnGet(page, /^\/portal\/keys$/);
    expect(await rows.count()).toBe(before + 1);
    expect(await page.locator('#shown-key').count()).toBe(0);
    expect(await text(page.getByRole('status'))).toContain('no longer shown');
    // The key works (it was created once, and only once).
    expect((await call(url, 'GET', '/chat-accounts', { key })).status).toBe(200);

    const row = page.locator('tr', { hasText: 'reload test' });
    await row.getByLabel('Password').fill(PASSWORD);
    await row.getByRole('button', { name: 'Reveal' }).click();
    expect(await text(page.locator('#shown-key'))).toBe(key);
    expect(page.url()).not.toContain(key);
    await landedOnGet(page, /^\/portal\/keys$/);
    expect(await page.locator('#shown-key').count()).toBe(0);
    // Back from the reveal does not answer ERR_CACHE_MISS: it is a GET page.
    await page.goto(`${url}/portal`);
    const back = await page.goBack();
    expect(back?.request().method() ?? 'GET').toBe('GET');
    expect(await page.locator('#shown-key').count()).toBe(0);

    // Revoke: a confirmation page, then a redirect; a reload revokes nothing more.
    await page.goto(`${url}/portal/keys`);
    await page.locator('tr', { hasText: 'reload test' }).getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    expect(await text(page.getByRole('status'))).toContain('The key is revoked');
    await landedOnGet(page, /^\/portal\/keys$/);
    expect((await call(url, 'GET', '/chat-accounts', { key })).status).toBe(401);
    await page.context().close();
  });

  it('a shown-once secret is bound to the session that made it', async () => {
    // One session creates a key and stops at the redirect; another session of the same user
    // opens the address it names.
    const client = new PortalClient(url);
    await client.login(owner);
    const created = await client.submit('/portal/keys', '/portal/keys', { name: 'bound', password: PASSWORD });
    expect(created.status).toBe(303);
    const location = created.headers.get('location')!;
    expect(location).toMatch(/^\/portal\/keys\?shown=[\w-]{20,}$/);
    const other = await loggedIn(browser, url, owner);
    await other.goto(`${url}${location}`);
    expect(await other.locator('#shown-key').count()).toBe(0);
    expect(await text(other.getByRole('status'))).toContain('no longer shown');
    await other.context().close();
    // Opening it in the other session did not take it from its own; its own reads it once.
    const first = await client.get(location);
    expect(first.text).toMatch(/id="shown-key" class="secret">ak_live_/);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const second = await client.get(location);
    expect(second.text).not.toContain('id="shown-key"');
  });

  it('adds an endpoint and saves it: a reload adds no second endpoint', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill(`${receiver.url}/once`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await text(page.locator('#secret'))).toMatch(/^whsec_/);
    await landedOnGet(page, /^\/portal\/webhooks$/);
    expect(await page.locator('#secret').count()).toBe(0);
    const listed = await call(url, 'GET', '/webhook-endpoints', { key: pro.key });
    const mine = (listed.body.webhookEndpoints as { id: string; url: string }[]).filter(
      (e) => e.url === `${receiver.url}/once`,
    );
    expect(mine).toHaveLength(1);

    await page.getByRole('link', { name: `${receiver.url}/once` }).click();
    await page.getByLabel('Description').fill('saved once');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await text(page.getByRole('status'))).toContain('Saved.');
    await landedOnGet(page, new RegExp(`^/portal/webhooks/${mine[0]!.id}$`));
    await page.context().close();
  });

  it('rotates a secret only after a confirmation; a reload does not rotate again; rotating twice keeps the original secret', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill(`${receiver.url}/rotate`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const original = await text(page.locator('#secret'));
    await page.getByRole('link', { name: `${receiver.url}/rotate` }).click();
    const detail = page.url();

    const rotate = async () => {
      await page.getByRole('link', { name: 'Rotate secret…' }).click();
      expect(await text(page.getByRole('alert'))).toContain('keeps the oldest secret valid');
      await checkPage(page, '33-rotate-confirm');
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const secret = await text(page.locator('#secret'));
      expect(page.url()).not.toContain(secret);
      await landedOnGet(page, /^\/portal\/webhooks\/[0-9a-f-]{36}$/);
      expect(await page.locator('#secret').count()).toBe(0);
      return secret;
    };
    // Going back from the confirmation rotates nothing.
    await page.getByRole('link', { name: 'Rotate secret…' }).click();
    await page.getByRole('link', { name: 'Go back' }).click();
    expect(page.url()).toBe(detail);

    const middle = await rotate();
    const newest = await rotate();
    expect(new Set([original, middle, newest]).size).toBe(3);
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [hit] = await receiver.waitForRequests(1, { filter: (r) => r.path === '/rotate' });
    const header = String(hit!.headers['x-svc-signature']);
    // The receiver that never switched keeps verifying; the secret shown in between is dropped.
    expect(verifyWebhookSignature(hit!.rawBody, header, original)).toBe(true);
    expect(verifyWebhookSignature(hit!.rawBody, header, newest)).toBe(true);
    expect(verifyWebhookSignature(hit!.rawBody, header, middle)).toBe(false);
    await page.context().close();
  });

  it('creates a rule, saves a filter and deletes the rule: a reload repeats none of them', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/inbox`);
    await page.getByLabel('Name', { exact: true }).fill('reload-rule');
    await page.getByLabel('Pattern').fill('HELLO');
    await page.getByLabel(/Destination URL/).fill(`${receiver.url}/rule`);
    await page.getByRole('button', { name: 'Create rule' }).click();
    expect(await text(page.getByRole('status'))).toContain('Rule created.');
    await landedOnGet(page, /^\/portal\/inbox$/);
    const rules = async () =>
      (
        (await call(url, 'GET', '/forwarding-rules', { key: pro.key })).body.forwardingRules as { name: string }[]
      ).filter((r) => r.name === 'reload-rule');
    expect(await rules()).toHaveLength(1);

    const filterForm = page.locator(`form[action="/portal/inbox/filters/${pro.accountId}"]`);
    await filterForm.getByLabel('Mode').selectOption('blacklist');
    await filterForm.getByLabel('Numbers, one per line').fill('+14155550199');
    await filterForm.getByRole('button', { name: 'Save filter' }).click();
    expect(await text(page.getByRole('status'))).toContain('Filter saved.');
    await landedOnGet(page, /^\/portal\/inbox$/);

    await page.locator('li', { hasText: 'reload-rule' }).getByRole('link', { name: 'Delete…' }).click();
    await checkPage(page, '31-rule-delete-confirm');
    await page.getByRole('button', { name: 'Delete the rule' }).click();
    expect(await text(page.getByRole('status'))).toContain('Rule deleted.');
    await landedOnGet(page, /^\/portal\/inbox$/);
    expect(await rules()).toHaveLength(0);
    await page.context().close();
  });

  it('cancels a scheduled message after a confirmation; a reload cancels nothing more', async () => {
    const sent = await call(url, 'POST', '/messages', {
      key: pro.key,
      body: {
        externalId: 'reload-cancel-1',
        to: { type: 'phone', phoneE164: '+15551230177' },
        content: { type: 'text', text: 'later' },
        sendAt: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    expect(sent.status).toBe(201);
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/messages/${sent.body.messageId}`);
    await page.getByRole('link', { name: 'Cancel message reload-cancel-1' }).click();
    await checkPage(page, '32-message-cancel-confirm');
    await page.getByRole('button', { name: 'Cancel the message' }).click();
    expect(await text(page.getByRole('status'))).toContain('Cancelled');
    await landedOnGet(page, new RegExp(`^/portal/messages/${sent.body.messageId}$`));
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.context().close();
  });

  it('keeps "Messages of this broadcast" under other filters, and says why a bad broadcast id or range shows nothing (#27.6)', async () => {
    const b = await call(url, 'POST', '/messages/broadcast', {
      key: pro.key,
      body: {
        externalId: 'reload-broadcast',
        content: { type: 'text', text: 'Spring sale' },
        recipients: [
          { phoneE164: '+15551239001', externalId: 'rb-1' },
          { phoneE164: '+15551239002', externalId: 'rb-2' },
        ],
      },
    });
    expect(b.status).toBe(201);
    const other = await call(url, 'POST', '/messages', {
      key: pro.key,
      body: {
        externalId: 'not-in-broadcast',
        to: { type: 'phone', phoneE164: '+15551239003' },
        content: { type: 'text', text: 'x' },
      },
    });
    expect(other.status).toBe(201);
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/broadcasts/${b.body.broadcastId}`);
    await page.getByRole('link', { name: 'Messages of this broadcast' }).click();
    const ids = async () => (await page.locator('tbody tr td:nth-child(2)').allInnerTexts()).sort();
    expect(await ids()).toEqual(['rb-1', 'rb-2']);
    // Another filter applied: the broadcast's filter stays (in the form, and in the URL).
    await page.getByLabel('Account').selectOption(pro.accountId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/chatAccountId=/);
    expect(new URL(page.url()).searchParams.get('broadcastId')).toBe(b.body.broadcastId);
    expect(await page.getByLabel('Broadcast').inputValue()).toBe(b.body.broadcastId);
    expect(await ids()).toEqual(['rb-1', 'rb-2']);

    await page.goto(`${url}/portal/messages?broadcastId=nonsense`);
    expect(await text(page.getByRole('alert'))).toContain('is not a broadcast id');
    expect(await page.locator('tbody tr').count()).toBe(0);
    await page.goto(`${url}/portal/messages?since=2026-11-26T10:00&until=2026-11-25T10:00`);
    expect(await text(page.getByRole('alert'))).toContain('must not be before');
    expect(await page.locator('tbody tr').count()).toBe(0);
    await page.context().close();
  });

  it('shows a cancelled message as cancelled, with its own status filter; the API keeps failed + CANCELLED (#27.7)', async () => {
    const sent = await call(url, 'POST', '/messages', {
      key: pro.key,
      body: {
        externalId: 'shown-cancelled',
        to: { type: 'phone', phoneE164: '+15551239010' },
        content: { type: 'text', text: 'later' },
        sendAt: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    expect((await call(url, 'POST', `/messages/${sent.body.messageId}/cancel`, { key: pro.key })).status).toBe(200);
    expect((await call(url, 'GET', `/messages/${sent.body.messageId}`, { key: pro.key })).body).toMatchObject({
      status: 'failed',
      error: { code: 'CANCELLED' },
    });
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/messages`);
    expect(await text(page.locator('tr', { hasText: 'shown-cancelled' }).locator('.status'))).toBe('cancelled');
    await page.getByLabel('Status').selectOption('cancelled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=cancelled/);
    expect(await page.locator('tr', { hasText: 'shown-cancelled' }).count()).toBe(1);
    await checkPage(page, '34-messages-cancelled');
    await page.goto(`${url}/portal/messages?status=failed`);
    expect(await page.locator('tr', { hasText: 'shown-cancelled' }).count()).toBe(0);
    await page.goto(`${url}/portal/messages/${sent.body.messageId}`);
    const fields = await text(page.locator('dl.fields').first());
    expect(fields).toMatch(/Status\s+cancelled/);
    await page.context().close();
  });

  it('keeps what was typed when a filter or CSV has a problem, names the line in words, never a raw code (#27.5)', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/inbox`);
    const form = page.locator(`form[action="/portal/inbox/filters/${pro.accountId}"]`);
    const typed = '+14155550101\n+1 415 555 0102\nnot a number\n+14155550104';
    await form.getByLabel('Mode').selectOption('whitelist');
    await form.getByLabel('Numbers, one per line').fill(typed);
    await form.getByRole('button', { name: 'Save filter' }).click();
    const problem = await text(form.getByRole('alert'));
    expect(problem).toContain('Line 3');
    expect(problem).toContain('not a number');
    expect(await form.getByLabel('Numbers, one per line').inputValue()).toBe(typed);
    expect(await form.getByLabel('Mode').inputValue()).toBe('whitelist');
    expect(await form.getByLabel('Numbers, one per line').getAttribute('aria-invalid')).toBe('true');
    const body = await page.content();
    for (const raw of ['numbers.', 'validation_error']) expect(body).not.toContain(raw);
    await checkPage(page, '35-filter-problem');
    // Fixed, it saves, spaces inside a number included.
    await form.getByLabel('Numbers, one per line').fill('+14155550101\n+1 415 555 0102');
    await form.getByRole('button', { name: 'Save filter' }).click();
    expect(await text(page.getByRole('status'))).toContain('Filter saved.');
    const saved = await call(url, 'GET', `/chat-accounts/${pro.accountId}/inbox-filter`, { key: pro.key });
    expect(saved.body.numbers).toEqual(['+14155550101', '+14155550102']);

    // A CSV with a bad phone on line 12 (a header, then ten good rows): the row says line 12, in words.
    const rows = Array.from({ length: 10 }, (_, i) => `+1555123${String(9100 + i)},r${i}`);
    await page.goto(`${url}/portal/broadcasts`);
    await page.getByLabel('Text (for a text broadcast)').fill('Hello');
    await page.getByLabel(/^Recipients/).fill(['phone,externalId', ...rows, '+12,short'].join('\n'));
    await page.getByRole('button', { name: 'Check recipients' }).click();
    const bad = page.locator('tr.bad-row');
    await bad.first().waitFor();
    expect(await bad.locator('td').first().innerText()).toBe('12');
    const why = await bad.locator('td').nth(2).innerText();
    expect(why).toContain('phone number');
    expect(why).not.toMatch(/recipients\.|phoneE164/);

    // A plan gate and a wrong login in words, without the API's codes.
    const starter = await createTenant(url, { plan: 'starter' });
    await createPortalUser(url, starter.customerId, 'owner@starter-reload.example');
    const small = await loggedIn(browser, url, 'owner@starter-reload.example');
    await small.goto(`${url}/portal/webhooks`);
    expect(await small.content()).not.toContain('feature_not_available');
    await small.context().close();
    const context = await browser.newContext();
    const login = await context.newPage();
    await login.goto(`${url}/portal/login`);
    await login.getByLabel('Email').fill(owner);
    await login.getByLabel('Password').fill('wrong-password-123');
    await login.getByRole('button', { name: 'Log in' }).click();
    expect(await text(login.getByRole('alert'))).toBe('Wrong email or password.');
    await context.close();
    await page.context().close();
  });
});
