// The portal's changing actions in a real browser (chromium via playwright-core) against the real
// server and the provider emulator: a webhook endpoint edited, its secret rotated and a delivery
// redelivered; the audit log of those actions (owners only); a forwarding rule checked, created
// and deleted; an inbox whitelist saved; a template created through the provider. Each result is
// checked through the API.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { verifyWebhookSignature } from '../src/webhooks/signature.js';
import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, createTenant, eventually, startService } from './support/harness.js';
import { createPortalUser } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const MGMT_TOKEN = 'EAAG-portal-management-0123456789';

describe('portal actions in chromium', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let receiver: Receiver;
  let browser: Browser;
  let url: string;
  let pro: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@actions.example';
  const viewer = 'viewer@actions.example';

  beforeAll(async () => {
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    url = live.svc.url;
    receiver = await startReceiver();
    pro = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, pro.customerId, owner);
    await createPortalUser(url, pro.customerId, viewer, 'viewer');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  it('edits an endpoint, rotates its secret, redelivers an event; the audit log shows who did it', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill(`${receiver.url}/edit`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const firstSecret = (await text(page.locator('#secret'))).match(/whsec_\S+/)![0];
    await page.getByRole('link', { name: `${receiver.url}/edit` }).click();
    const id = page.url().split('/').pop()!;

    await page.getByLabel('Description').fill('edited in the portal');
    await page.getByLabel('message.inbound', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await text(page.getByRole('status'))).toContain('Saved.');
    const saved = await call(url, 'GET', `/webhook-endpoints/${id}`, { key: pro.key });
    expect(saved.body.description).toBe('edited in the portal');
    expect(saved.body.events).not.toContain('message.inbound');
    expect(saved.body.events).toContain('message.status');

    // Rotating asks first (issue #27.2), then shows the new secret once.
    await page.getByRole('link', { name: 'Rotate secret…' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await text(page.locator('#secret'))).match(/whsec_\S+/)![0];
    expect(secret).not.toBe(firstSecret);
    await checkPage(page, '20-webhook-rotated');

    await page.getByRole('button', { name: 'Send a test event' }).click();
    expect(await text(page.getByRole('status'))).toContain('queued');
    const [test] = await receiver.waitForRequests(1, { filter: (r) => r.path === '/edit' });
    expect(verifyWebhookSignature(test!.rawBody, String(test!.headers['x-svc-signature']), secret)).toBe(true);
    const eventId = String(test!.headers['x-svc-event-id']);

    // A reload after the POST shows the page again without queuing another test event (post/redirect/get).
    await eventually(async () => {
      await page.reload();
      return (await page.locator('tr.delivery li.attempt').count()) > 0;
    });
    expect(receiver.requests.filter((r) => r.path === '/edit')).toHaveLength(1);
    await page.locator('tr.delivery', { hasText: eventId }).getByRole('button', { name: 'Redeliver' }).click();
    expect(await text(page.getByRole('status'))).toContain('Redelivery queued.');
    const again = await receiver.waitForRequests(2, { filter: (r) => r.path === '/edit' });
    expect(again.map((r) => r.headers['x-svc-event-id'])).toEqual([eventId, eventId]);

    await page.getByRole('link', { name: 'Audit log' }).click();
    const rows = page.locator('#audit tbody tr');
    await rows.first().waitFor();
    const entries = await rows.allInnerTexts();
    // Newest first, each target named by the endpoint's URL (issue #27, part 2), never its id.
    const endpoint = `${receiver.url}/edit`;
    expect(entries[0]).toContain('webhook.redeliver');
    expect(entries[0]).toContain(owner);
    expect(entries[0]).toContain(`event ${eventId} to ${endpoint}`);
    for (const action of ['webhook.test', 'webhook.rotate_secret', 'webhook.update', 'webhook.create'])
      expect(entries.some((e) => e.includes(action) && e.includes(endpoint))).toBe(true);
    expect(entries.some((e) => e.includes(id))).toBe(false);
    await checkPage(page, '21-audit-log');
    await page.context().close();

    const seen = await loggedIn(browser, url, viewer);
    const res = await seen.goto(`${url}/portal/audit`);
    expect(res!.status()).toBe(403);
    expect(await text(seen.getByRole('alert'))).toContain('Only owners');
    expect(await seen.locator('#audit').count()).toBe(0);
    await seen.context().close();
  });

  it('checks a sample against a rule, creates the rule, and deletes it', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/inbox`);
    await page.getByLabel('Name', { exact: true }).fill('orders');
    await page.getByLabel('Condition').selectOption('starts_with');
    await page.getByLabel('Pattern').fill('ORDER');
    await page.getByLabel(/Destination URL/).fill(`${receiver.url}/rule`);
    await page.getByLabel('Sample text to check').fill('ORDER 17 please');
    expect(await text(page.locator('#sample-result'))).toContain('The sample matches this rule.');
    await page.getByLabel('Sample text to check').fill('where is my order');
    await eventually(async () => (await page.locator('#sample-result').innerText()).includes('does not match'));

    await page.getByRole('button', { name: 'Create rule' }).click();
    expect(await text(page.getByRole('status'))).toContain('Rule created.');
    const listed = await call(url, 'GET', '/forwarding-rules', { key: pro.key });
    const rule = (listed.body.forwardingRules as Record<string, any>[]).find((r) => r.name === 'orders');
    expect(rule?.condition).toMatchObject({ type: 'starts_with', pattern: 'ORDER' });
    await checkPage(page, '22-inbox-rule');

    await page.locator('li', { hasText: 'orders' }).getByRole('link', { name: 'Delete…' }).click();
    await page.getByRole('button', { name: 'Delete the rule' }).click();
    expect(await text(page.getByRole('status'))).toContain('Rule deleted.');
    const after = await call(url, 'GET', '/forwarding-rules', { key: pro.key });
    expect((after.body.forwardingRules as { id: string }[]).map((r) => r.id)).not.toContain(rule!.id);
    await page.context().close();
  });

  it("saves an account's inbox whitelist, refuses a number it cannot read, and the API sees the filter", async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/inbox`);
    const filterForm = () => page.locator(`form[action="/portal/inbox/filters/${pro.accountId}"]`);
    const saveWhitelist = async (numbers: string) => {
      await filterForm().getByLabel('Mode').selectOption('whitelist');
      await filterForm().getByLabel('Numbers, one per line').fill(numbers);
      await filterForm().getByRole('button', { name: 'Save filter' }).click();
    };
    const filterViaApi = async () =>
      (await call(url, 'GET', `/chat-accounts/${pro.accountId}/inbox-filter`, { key: pro.key })).body;

    await saveWhitelist('+14155550101\nnot a number');
    // The problem names the line (issue #27.5), not the API's path numbers.1.
    expect(await text(page.getByRole('alert'))).toContain('Line 2');
    expect((await filterViaApi()).mode).toBe('off');

    await saveWhitelist('+14155550101\n+14155550102');
    expect(await text(page.getByRole('status'))).toContain('Filter saved.');
    expect(await filterViaApi()).toMatchObject({ mode: 'whitelist', numbers: ['+14155550101', '+14155550102'] });
    // The page shows what was saved.
    await page.goto(`${url}/portal/inbox`);
    expect(await filterForm().getByLabel('Mode').inputValue()).toBe('whitelist');
    expect(await filterForm().getByLabel('Numbers, one per line').inputValue()).toContain('+14155550102');
    await checkPage(page, '23-inbox-filter');
    await page.context().close();
  });

  it('creates a template through the provider with the management credential', async () => {
    const wabaId = `waba${crypto.randomBytes(5).toString('hex')}`;
    await live.emu.waba(wabaId, { managementToken: MGMT_TOKEN });
    const accountId = await createAccount(url, pro.customerId, {
      displayName: 'Templates line',
      official: {
        phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
        wabaId,
        accessToken: 'EAAG-send-token',
        managementToken: MGMT_TOKEN,
      },
    });
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/templates`);
    await page.locator(`#n-${accountId}`).fill('portal_order_ready');
    await page.locator(`#b-${accountId}`).fill('Your order {{1}} is ready.');
    await page.locator(`#e-${accountId}`).fill('1=A-17');
    await page
      .locator('form', { has: page.locator(`#n-${accountId}`) })
      .getByRole('button', { name: 'Create template' })
      .click();
    expect(await text(page.getByRole('status'))).toContain('Template created');
    expect(await text(page.locator('tr', { hasText: 'portal_order_ready' }))).toContain('portal_order_ready');
    await checkPage(page, '23-template-created');
    const reader = await createKey(url, pro.customerId, { templateAccess: 'read' });
    const listed = await call(url, 'GET', `/chat-accounts/${accountId}/templates`, { key: reader });
    const names = (listed.body.templates as { name: string }[]).map((t) => t.name);
    expect(names).toContain('portal_order_ready');
    await page.context().close();
  });
});

describe('portal broadcast cancel in chromium (API role only: nothing is sent meanwhile)', () => {
  let svc: Awaited<ReturnType<typeof startService>>;
  let browser: Browser;

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('cancels a running broadcast: its messages fail with BROADCAST_CANCELLED, the button goes', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, 'owner@cancel.example');
    const page = await loggedIn(browser, svc.url, 'owner@cancel.example');
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Last call');
    const csv = path.join(os.tmpdir(), `recipients-${crypto.randomUUID()}.csv`);
    fs.writeFileSync(csv, 'phone,externalId\n+15551110011,c1\n+15551110012,c2\n+15551110013,c3\n');
    await page.getByLabel(/CSV file/).setInputFiles(csv);
    await page.getByRole('button', { name: 'Check recipients' }).click();
    await page.getByRole('button', { name: 'Send to 3 recipient(s)' }).click();
    await page.waitForURL(/\/portal\/broadcasts\/[0-9a-f-]{36}$/);
    const broadcastId = page.url().split('/').pop()!;
    expect(await text(page.locator('.bstatus'))).toBe('active');

    await page.getByRole('link', { name: 'Cancel the broadcast…' }).click();
    await page.getByRole('button', { name: 'Cancel the broadcast' }).click();
    expect(await text(page.getByRole('status'))).toContain('Cancelled');
    // Post/redirect/get: a reload shows the broadcast, it does not cancel again.
    expect((await page.reload())!.request().method()).toBe('GET');
    expect(await text(page.locator('.bstatus'))).toBe('cancelled');
    await checkPage(page, '24-broadcast-cancelled');
    expect(await page.getByRole('link', { name: 'Cancel the broadcast…' }).count()).toBe(0);

    const b = await call(svc.url, 'GET', `/broadcasts/${broadcastId}`, { key: t.key });
    expect(b.body).toMatchObject({ status: 'cancelled', cancelledMessages: 3 });
    const m = await call(svc.url, 'GET', '/messages/c2', { key: t.key });
    expect(m.body.status).toBe('failed');
    expect(m.body.error.code).toBe('BROADCAST_CANCELLED');
    await page.context().close();
  });
});
