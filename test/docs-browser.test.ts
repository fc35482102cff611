// /docs on a service that listens on a random port (not 3000) and whose PUBLIC_BASE_URL names
// another host (https://chatgate.test): "Try it out" must call the service the page came from.
// In Debian's chromium: authorise with an API key, execute GET /usage, read the live answer.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { launchBrowser } from './support/browser.js';
import { call, createTenant, type Service, startService, type Tenant } from './support/harness.js';

describe('/docs in a browser, on a non-default port', () => {
  let svc: Service;
  let tenant: Tenant;
  let browser: Browser;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    tenant = await createTenant(svc.url, { plan: 'starter' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('serves the document with this service as its server: relative first, then PUBLIC_BASE_URL', async () => {
    expect(new URL(svc.url).port).not.toBe('3000');
    const doc = (await call(svc.url, 'GET', '/openapi.json')).body;
    expect(doc.servers.map((s: { url: string }) => s.url)).toEqual(['/', 'https://chatgate.test']);
    expect((await call(svc.url, 'GET', '/docs/json')).body.servers).toEqual(doc.servers);
  });

  it('executes an operation from "Try it out" against the port it was loaded from, and shows the project name', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
    });
    try {
      await page.goto(`${svc.url}/docs`);
      const logo = page.locator('.topbar img').first();
      await logo.waitFor({ timeout: 30_000 });
      const src = (await logo.getAttribute('src')) ?? '';
      expect(Buffer.from(src.replace(/^data:image\/svg\+xml;base64,/, ''), 'base64').toString()).toContain(
        'ChatGate API',
      );

      await page.locator('button.authorize').first().click();
      const apiKeyBox = page.locator('.auth-container').filter({ hasText: 'x-api-key' });
      await apiKeyBox.locator('input').fill(tenant.key);
      await apiKeyBox.locator('button.authorize[type=submit]').click();
      await apiKeyBox.getByText('Logout').waitFor();
      await page.locator('.dialog-ux .close-modal').click();

      const op = page.locator('#operations-usage-getUsage');
      await op.locator('.opblock-summary').first().click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      await op.getByRole('button', { name: 'Execute' }).click();
      const status = op.locator('.live-responses-table tr.response .response-col_status').first();
      await status.waitFor({ timeout: 30_000 });
      expect((await status.innerText()).trim()).toBe('200');
      expect((await op.locator('.request-url pre').first().innerText()).trim()).toBe(`${svc.url}/usage`);
      expect(
        await op.locator('.live-responses-table tr.response .response-col_description').first().innerText(),
      ).toContain('"plan": "starter"');
      expect(refused).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
