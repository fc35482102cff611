// The portal in a real browser: Debian's chromium driven by playwright-core against the real
// server (with the provider emulator). Every page is checked with axe-core (no serious or
// critical violation) and a screenshot is kept under test-results/portal-screenshots/.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn as signIn, text } from './support/browser.js';
import { startLiveService } from './support/emulator.js';
import { call, createTenant, eventually } from './support/harness.js';
import { createPortalUser, PASSWORD } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

describe('portal in chromium', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let receiver: Receiver;
  let browser: Browser;
  let url: string;
  let pro: Awaited<ReturnType<typeof createTenant>>;
  const email = 'owner@pro.example';

  beforeAll(async () => {
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    url = live.svc.url;
    receiver = await startReceiver();
    pro = await createTenant(url, { plan: 'pro' });
    await call(url, 'PATCH', `/admin/chat-accounts/${pro.accountId}`, {
      admin: true,
      body: { sendPolicy: { mode: 'PRODUCTION' } },
    });
    await createPortalUser(url, pro.customerId, email);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  const loggedIn = (who = email): Promise<Page> => signIn(browser, url, who);

  it('logs in, refuses a wrong password, and passes axe on the login and overview pages', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${url}/portal/login`);
    await checkPage(page, '00-login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong-password-123');
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await text(page.getByRole('alert'))).toContain('Wrong email or password.');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${url}/portal`);
    expect(await text(page.getByRole('heading', { level: 1 }))).toBe('Overview');
    await checkPage(page, '01-overview');
    await context.close();
  });

  it('creates a key, uses it with the API, reveals it with the password, revokes it (then 401)', async () => {
    const page = await loggedIn();
    await page.goto(`${url}/portal/keys`);
    await checkPage(page, '02-keys');
    await page.getByLabel('Name', { exact: true }).fill('browser key');
    await page.getByLabel('Your password (to confirm)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#shown-key').textContent())!.trim();
    expect(key).toMatch(/^ak_live_[0-9a-f]{64}$/);
    await checkPage(page, '03-key-created');
    const used = await call(url, 'GET', '/messages', { key });
    expect(used.status).toBe(200);

    const row = page.locator('tr', { hasText: 'browser key' });
    await row.getByLabel('Password').fill(PASSWORD);
    await row.getByRole('button', { name: 'Reveal' }).click();
    expect((await page.locator('#shown-key').textContent())!.trim()).toBe(key);

    await page.locator('tr', { hasText: 'browser key' }).getByRole('link', { name: 'Revoke…' }).click();
    expect(await text(page.getByRole('alert'))).toContain('immediate and irreversible');
    await checkPage(page, '04-key-revoke');
    await page.getByRole('button', { name: 'Revoke now' }).click();
    expect(await text(page.getByRole('status'))).toContain('revoked');
    expect((await call(url, 'GET', '/messages', { key })).status).toBe(401);
    await page.context().close();
  });

  it('shows a sandbox send in the messages page with its status, and its detail', async () => {
    const sent = await call(url, 'POST', '/messages', {
      key: pro.sandboxKey,
      body: {
        externalId: 'portal-sandbox-1',
        to: { type: 'phone', phoneE164: '+15551230088' },
        content: { type: 'text', text: 'hello' },
        metadata: { order: 'A-17' },
      },
    });
    expect(sent.status).toBe(201);
    await eventually(
      async () =>
        (await call(url, 'GET', `/messages/${sent.body.messageId}`, { key: pro.sandboxKey })).body.status === 'read',
    );
    const page = await loggedIn();
    await page.goto(`${url}/portal/messages`);
    const row = page.locator('tr', { hasText: 'portal-sandbox-1' });
    expect(await text(row)).toContain('read');
    expect(await text(row)).toContain('SANDBOX');
    await checkPage(page, '05-messages');
    await row.getByRole('link', { name: 'portal-sandbox-1' }).click();
    expect(await text(page.locator('pre').first())).toContain('A-17');
    await checkPage(page, '06-message-detail');
    await page.goto(`${url}/portal/accounts`);
    await checkPage(page, '07-accounts');
    await page.context().close();
  });

  it('lists a scheduled message under the scheduled filter and cancels it with its button', async () => {
    const sendAt = new Date(Date.now() + 3600_000).toISOString();
    const sent = await call(url, 'POST', '/messages', {
      key: pro.key,
      body: {
        externalId: 'portal-scheduled-1',
        to: { type: 'phone', phoneE164: '+15551230077' },
        content: { type: 'text', text: 'later' },
        sendAt,
      },
    });
    expect(sent.status).toBe(201);
    const page = await loggedIn();
    await page.goto(`${url}/portal/messages`);
    await page.getByLabel('Scheduled', { exact: true }).selectOption('true');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/scheduled=true/);
    const row = page.locator('tr', { hasText: 'portal-scheduled-1' });
    expect(await text(row)).toContain('pending');
    await checkPage(page, '05b-messages-scheduled');
    await row.getByRole('link', { name: 'Cancel message portal-scheduled-1' }).click();
    await page.getByRole('button', { name: 'Cancel the message' }).click();
    expect(await text(page.getByRole('status'))).toContain('Cancelled');
    const after = await call(url, 'GET', `/messages/${sent.body.messageId}`, { key: pro.key });
    expect(after.body).toMatchObject({ status: 'failed', error: { code: 'CANCELLED' } });
    await page.context().close();
  });

  it('creates a webhook endpoint, sends a test event to a local receiver, shows the attempt', async () => {
    const page = await loggedIn();
    await page.goto(`${url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill(`${receiver.url}/hook`);
    await page.getByLabel('Description').fill('local receiver');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await text(page.locator('#secret'))).toContain('whsec_');
    await checkPage(page, '08-webhooks');
    await page.getByRole('link', { name: `${receiver.url}/hook` }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [received] = await receiver.waitForRequests(1, {
      filter: (r) => r.headers['x-svc-event'] === 'webhook.test',
    });
    expect(received).toBeDefined();
    await eventually(async () => {
      await page.reload();
      return (await page.locator('li.attempt').count()) > 0;
    });
    expect(await text(page.locator('li.attempt').first())).toContain('200');
    await checkPage(page, '09-webhook-detail');
    await page.context().close();
  });

  it('sends a CSV broadcast: the bad row is reported, the rest are sent', async () => {
    const page = await loggedIn();
    await page.goto(`${url}/portal/broadcasts/new`);
    await checkPage(page, '10-broadcasts');
    await page.getByLabel('Text (for a text broadcast)').fill('Sale today');
    const csv = path.join(os.tmpdir(), `recipients-${crypto.randomUUID()}.csv`);
    fs.writeFileSync(csv, 'phone,externalId\n+15551110001,r1\nnot-a-number,r2\n+15551110003,r3\n');
    await page.getByLabel(/CSV file/).setInputFiles(csv);
    await page.getByRole('button', { name: 'Check recipients' }).click();
    await page.locator('tr.bad-row').first().waitFor();
    expect(await page.locator('tr.bad-row').count()).toBe(1);
    expect(await text(page.locator('tr.bad-row'))).toContain('not-a-number');
    await checkPage(page, '11-broadcast-check');
    await page.getByRole('button', { name: 'Send to 2 recipient(s)' }).click();
    await page.waitForLoadState();
    if (!/\/portal\/broadcasts\/[0-9a-f-]{36}$/.test(page.url()))
      throw new Error(await page.locator('main').innerText());
    await eventually(async () => {
      await page.reload();
      return (await page.locator('.bstatus').textContent()) === 'completed';
    }, 30_000);
    expect(await text(page.locator('#progress'))).toContain('2 of 2 processed');
    await checkPage(page, '12-broadcast-progress');
    await page.goto(`${url}/portal/inbox`);
    await checkPage(page, '13-inbox');
    await page.goto(`${url}/portal/templates`);
    await checkPage(page, '14-templates');
    await page.context().close();
  });

  it('shows a Free customer the webhooks gate with the plans that enable it', async () => {
    const free = await createTenant(url, { plan: 'free' });
    await createPortalUser(url, free.customerId, 'owner@free.example');
    const page = await loggedIn('owner@free.example');
    await page.goto(`${url}/portal/webhooks`);
    expect(await text(page.locator('.gate'))).toContain('Basic and Pro');
    await checkPage(page, '15-free-webhooks-gate');
    await page.context().close();
  });
});
