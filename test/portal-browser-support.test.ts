// What a support team needs in the portal (issue #37, decision 0074), in chromium against the real
// server: the message list shows each message's words (a text's first characters, a template's
// name and values), never its JSON; suppression lists are listed, searched, added to and removed
// from, each change audited, through the API's own service (what the API lists, the page lists);
// an endpoint's deliveries are filtered by event type and status, the page says what a replay
// covers, and the event catalogue shows every event type with its schema and an example; a
// broadcast's CSV gets a column mapping step and a preview of its first recipients.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EVENT_TYPES } from '../src/shared/vocab.js';
import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { call, createTenant, eventually, type Service, startService } from './support/harness.js';
import { createPortalUser } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

describe('portal support features in chromium', () => {
  let svc: Service;
  let browser: Browser;
  let t: Awaited<ReturnType<typeof createTenant>>;
  let page: Page;
  let receiver: Receiver;
  const owner = 'owner@support.example';

  async function send(externalId: string, content: Record<string, unknown>, phoneE164 = '+15550123400') {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { externalId, to: { type: 'phone', phoneE164 }, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    svc = await startService({ env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true' } });
    t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, owner);
    browser = await launchBrowser();
    page = await loggedIn(browser, svc.url, owner);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await receiver?.close();
  });

  /** The Content cell of the list's row whose externalId is `externalId`. */
  async function contentCell(externalId: string): Promise<string> {
    const row = page.locator('tr', { has: page.getByRole('link', { name: externalId, exact: true }) });
    const headers = await page.locator('table thead th').allInnerTexts();
    return text(row.locator('td').nth(headers.findIndex((h) => h.trim() === 'Content')));
  }

  it('lists messages with a text preview and the template name, not JSON', async () => {
    const long = `Your order #2701 has shipped and will arrive on Tuesday. ${'Thank you for waiting. '.repeat(10)}`;
    await send('preview-text', { type: 'text', text: long });
    await send('preview-template', {
      type: 'template',
      template: { name: 'order_update', language: 'en', components: { body: ['Ana', '#2701'] } },
    });
    await page.goto(`${svc.url}/portal/messages`);
    const textCell = await contentCell('preview-text');
    expect(textCell.startsWith('Your order #2701 has shipped and will arrive on Tuesday.')).toBe(true);
    expect(textCell.endsWith('…')).toBe(true);
    expect([...textCell].length).toBe(80);
    const tplCell = await contentCell('preview-template');
    expect(tplCell.replace(/\s+/g, ' ')).toBe('Template order_update Ana | #2701');
    expect(await text(page.locator('main'))).not.toMatch(/[{}]/);
    await checkPage(page, '37-messages-preview');
  });

  it('manages suppressions: list, search, add and remove, each audited', async () => {
    for (const phone of ['+15550177001', '+15550177002', '+15550188003']) {
      const res = await call(svc.url, 'POST', `/chat-accounts/${t.accountId}/suppressions`, {
        key: t.key,
        body: { phone, reason: `asked on the phone ${phone.slice(-3)}` },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    await page.getByRole('link', { name: 'Suppressions' }).click();
    await page.waitForURL(/\/portal\/suppressions/);
    const numbers = () => page.locator('tbody tr td:first-child').allInnerTexts();
    expect(await numbers()).toEqual(['+15550188003', '+15550177002', '+15550177001']);
    expect(await text(page.locator('tbody tr').first())).toContain('asked on the phone 003');
    await checkPage(page, '38-suppressions');

    // Search by part of a number; a LIKE wildcard is taken literally.
    await page.getByLabel('Number contains').fill('0177');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=0177/);
    expect(await numbers()).toEqual(['+15550177002', '+15550177001']);
    await page.getByLabel('Number contains').fill('%');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await text(page.locator('main'))).toContain('No suppressed number matches.');
    // Characters the database cannot store, in the search or the number to remove: a page, never a 5xx.
    for (const path of ['/portal/suppressions?q=a%00b', `/portal/suppressions/remove?account=${t.accountId}&phone=%00`])
      expect((await page.goto(`${svc.url}${path}`))!.status(), path).toBeLessThan(500);
    await page.goto(`${svc.url}/portal/suppressions`);

    // Add: a bad number is refused in words, a good one is listed (and the API lists it too).
    await page.getByLabel('Phone number').fill('12');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    expect(await text(page.getByRole('alert'))).toMatch(/phone/i);
    expect(await page.getByLabel('Phone number').inputValue()).toBe('12');
    await page.getByLabel('Phone number').fill('+1 555 019 9004');
    await page.getByLabel('Reason (optional)').fill('Asked at the counter');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    expect(await text(page.getByRole('status'))).toBe('The number is on the suppression list.');
    expect((await numbers())[0]).toBe('+15550199004');
    const api = await call(svc.url, 'GET', `/chat-accounts/${t.accountId}/suppressions`, { key: t.key });
    expect(api.body.suppressions[0]).toMatchObject({ phone: '+15550199004', reason: 'Asked at the counter' });

    // Remove, after a confirmation step.
    await page.getByRole('link', { name: 'Remove +15550177001' }).click();
    expect(await text(page.getByRole('alert'))).toContain('+15550177001');
    await checkPage(page, '39-suppression-remove');
    await page.getByRole('button', { name: 'Remove from the list' }).click();
    expect(await text(page.getByRole('status'))).toBe('The number is off the suppression list.');
    expect(await numbers()).not.toContain('+15550177001');
    const after = await call(svc.url, 'GET', `/chat-accounts/${t.accountId}/suppressions`, { key: t.key });
    expect(after.body.suppressions.map((x: { phone: string }) => x.phone)).not.toContain('+15550177001');

    const audit = await svc.db.query<{ action: string; target: string }>(
      `SELECT action, target FROM portal_audit_log WHERE customer_id = $1 AND action LIKE 'suppression.%' ORDER BY id`,
      [t.customerId],
    );
    expect(audit.map((a) => [a.action, a.target.split(' ')[0]])).toEqual([
      ['suppression.add', '+15550199004'],
      ['suppression.remove', '+15550177001'],
    ]);
  });

  it('filters deliveries by event type and status, says what a replay covers, and shows the event catalogue', async () => {
    receiver.respond(200);
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${receiver.url}/hook`, events: ['message.status'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;
    type D = { id: string; eventType: string; status: string; attemptCount: number };
    const list = async () =>
      (await call(svc.url, 'GET', `/webhook-endpoints/${id}/deliveries?limit=100`, { key: t.key })).body
        .deliveries as D[];
    expect((await call(svc.url, 'POST', `/webhook-endpoints/${id}/test`, { key: t.key })).status).toBe(202);
    await eventually(async () =>
      (await list()).some((d) => d.eventType === 'webhook.test' && d.status === 'succeeded'),
    );
    await send('hook-status', { type: 'text', text: 'status events' }, '+15550166001');
    await eventually(async () => (await list()).some((d) => d.eventType === 'message.status'), 60_000);
    // A receiver failing now: the next test event is retried (pending, one attempt made).
    receiver.respond(500);
    expect((await call(svc.url, 'POST', `/webhook-endpoints/${id}/test`, { key: t.key })).status).toBe(202);
    const retrying = await eventually(async () =>
      (await list()).find((d) => d.eventType === 'webhook.test' && d.status === 'pending' && d.attemptCount >= 1),
    );

    await page.goto(`${svc.url}/portal/webhooks/${id}`);
    const rows = () => page.locator('tr.delivery');
    const all = await rows().count();
    expect(all).toBeGreaterThanOrEqual(3);
    expect(await text(page.locator('#replay-scope'))).toContain('Deliveries still being retried are not part of it');
    await page.getByLabel('Event type').selectOption('webhook.test');
    await page.getByRole('button', { name: 'Filter deliveries' }).click();
    await page.waitForURL(/eventType=webhook\.test/);
    expect(await rows().count()).toBe(2);
    for (const r of await rows().allInnerTexts()) expect(r).toContain('webhook.test');
    await page.getByLabel('Delivery status').selectOption('pending');
    await page.getByRole('button', { name: 'Filter deliveries' }).click();
    await page.waitForURL(/status=pending/);
    expect(await rows().count()).toBe(1);
    expect(await rows().first().locator('a').first().getAttribute('href')).toContain(retrying.id);
    expect(await page.getByLabel('Delivery status').inputValue()).toBe('pending');
    await checkPage(page, '55-webhook-deliveries-filtered');
    // No such event came (later message.status events may be retrying too: the receiver fails now).
    await page.getByLabel('Event type').selectOption('sender.first_inbound');
    await page.getByRole('button', { name: 'Filter deliveries' }).click();
    await page.waitForURL(/eventType=sender\.first_inbound/);
    expect(await text(page.locator('main'))).toContain('No deliveries match these filters.');

    // The event catalogue: every type, its example (the document's, or built from its schema) and its schema.
    await page.getByRole('link', { name: 'What each event carries, with an example' }).click();
    await page.waitForURL(/\/portal\/webhooks\/events$/);
    for (const type of EVENT_TYPES) {
      const example = JSON.parse(await text(page.getByLabel(`Example of ${type}`))) as { type: string; data: object };
      expect(example.type, type).toBe(type);
      expect(typeof example.data, type).toBe('object');
      await page.getByText(`Schema of ${type}`, { exact: true }).click();
      const schema = JSON.parse(await text(page.getByLabel(`Schema of ${type}`, { exact: true }))) as {
        properties: { type: { const: string } };
      };
      expect(schema.properties.type.const).toBe(type);
    }
    expect(await text(page.getByLabel('Example of message.status'))).toContain('order-1042-shipped');
    await checkPage(page, '56-webhook-events');
  });

  it('maps the columns of a broadcast CSV and previews the first recipients', async () => {
    const lines = ['Name,Mobile,Order'];
    for (let i = 1; i <= 7; i++) lines.push(`Customer ${i},+1 555 014 000${i},order-${i}`);
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Your order is ready');
    await page.getByLabel(/CSV file/).setInputFiles({
      name: 'customers.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(lines.join('\n')),
    });
    await page.getByRole('button', { name: 'Check recipients' }).click();
    // Read as before: the first column is taken for the phone, so no row is sendable.
    await page.getByRole('heading', { name: 'Columns' }).waitFor();
    expect(await text(page.locator('main'))).toContain('7 row(s): 0 will be sent');
    const holds = (name: string) => page.getByLabel(`What the column ${name} holds`);
    expect(await holds('Name').inputValue()).toBe('phone');
    expect(await page.locator('td', { hasText: '+1 555 014 0001' }).count()).toBe(1); // the first recipient's value
    await checkPage(page, '48-broadcast-mapping');

    await holds('Name').selectOption('ignore');
    await holds('Mobile').selectOption('phone');
    await holds('Order').selectOption('externalId');
    await page.getByRole('button', { name: 'Check recipients' }).click();
    await page.getByRole('heading', { name: 'The first recipients' }).waitFor();
    expect(await text(page.locator('main'))).toContain('7 row(s): 7 will be sent');
    expect(await holds('Mobile').inputValue()).toBe('phone');
    const first = page.locator('tr.first-recipient');
    expect(await first.count()).toBe(5);
    expect((await first.first().innerText()).split('\t').map((c) => c.trim())).toEqual([
      '+15550140001',
      'order-1',
      '—',
    ]);
    await checkPage(page, '49-broadcast-first-recipients');
    await page.getByRole('button', { name: 'Send to 7 recipient(s)' }).click();
    await page.waitForURL(/\/portal\/broadcasts\/[0-9a-f-]{36}$/);
    const sent = await call(svc.url, 'GET', '/messages/order-7', { key: t.key });
    expect(sent.body.recipient).toBe('+15550140007');
  });
});
