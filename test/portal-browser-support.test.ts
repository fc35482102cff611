// What a support team needs in the portal (issue #37, decision 0074), in chromium against the real
// server: the message list shows each message's words (a text's first characters, a template's
// name and values), never its JSON.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser } from './support/portal.js';

describe('portal support features in chromium', () => {
  let svc: Service;
  let browser: Browser;
  let t: Awaited<ReturnType<typeof createTenant>>;
  let page: Page;
  const owner = 'owner@support.example';

  async function send(externalId: string, content: Record<string, unknown>, phoneE164 = '+15550123400') {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { externalId, to: { type: 'phone', phoneE164 }, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }

  beforeAll(async () => {
    svc = await startService();
    t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, owner);
    browser = await launchBrowser();
    page = await loggedIn(browser, svc.url, owner);
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
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
});
