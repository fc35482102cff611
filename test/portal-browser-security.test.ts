// The portal's password re-checks and date filters in a real browser (chromium via
// playwright-core) against the real server: wrong passwords in Reveal never lock the user out of
// logging in (issue 27 defect 4), a key is created and a webhook URL changed only with the
// password again, and bad dates in the inbox filter show a validation message instead of an
// error page (issue 27 defect 3, issue 21 item 7). Results are checked through the API.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD } from './support/portal.js';

describe('portal password re-checks and date filters in chromium', () => {
  let svc: Service;
  let browser: Browser;
  let t: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@rechecks.example';

  beforeAll(async () => {
    svc = await startService({
      role: 'api',
      env: { PORTAL_LOGIN_MAX_FAILURES: '3', UNSAFE_ALLOW_PRIVATE_URLS: 'true' },
    });
    t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, owner);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('five wrong passwords in Reveal throttle revealing, not logging in', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/keys`);
    const row = () => page.locator('tr', { hasText: 'ak_live_' }).first();
    for (let i = 0; i < 5; i++) {
      await row().getByLabel('Password').fill('wrong-password-123');
      await row().getByRole('button', { name: 'Reveal' }).click();
      expect(await text(page.getByRole('alert'))).toMatch(i < 3 ? /Wrong password\./ : /Too many wrong passwords/);
    }
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await page.waitForURL(/\/portal\/login/);
    await page.getByLabel('Email').fill(owner);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${svc.url}/portal`);
    expect(await text(page.getByRole('heading', { level: 1 }))).toBe('Overview');
    await page.context().close();
    await svc.db.query('DELETE FROM portal_login_failures');
  });

  it('creates a key only with the password, and changes a webhook URL only with it', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/keys`);
    await page.getByLabel('Name', { exact: true }).fill('needs a password');
    await page.getByLabel('Your password (to confirm)').fill('wrong-password-123');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect(await text(page.getByRole('alert'))).toContain('Wrong password.');
    expect(await page.locator('#shown-key').count()).toBe(0);
    await page.getByLabel('Name', { exact: true }).fill('needs a password');
    await page.getByLabel('Your password (to confirm)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create key' }).click();
    expect((await text(page.locator('#shown-key'))).trim()).toMatch(/^ak_live_/);
    await checkPage(page, '40-key-created-with-password');

    await page.goto(`${svc.url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill('https://hooks.example.com/before');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('link', { name: 'https://hooks.example.com/before' }).click();
    const id = page.url().split('/').pop()!;
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/after');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await text(page.getByRole('alert'))).toContain('Wrong password.');
    expect((await call(svc.url, 'GET', `/webhook-endpoints/${id}`, { key: t.key })).body.url).toBe(
      'https://hooks.example.com/before',
    );
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/after');
    await page.getByLabel('Your password (needed only to change the URL)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await text(page.getByRole('status'))).toContain('Saved.');
    expect((await call(svc.url, 'GET', `/webhook-endpoints/${id}`, { key: t.key })).body.url).toBe(
      'https://hooks.example.com/after',
    );
    await checkPage(page, '41-webhook-url-changed');
    await page.goto(`${svc.url}/portal/audit`);
    expect(await text(page.locator('main'))).toContain(
      'https://hooks.example.com/before → https://hooks.example.com/after',
    );
    await page.context().close();
  });

  it('shows a validation message for bad inbox dates and filters with good ones', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    for (const query of ['since=yesterday', 'until=abc', 'since=garbage']) {
      const res = await page.goto(`${svc.url}/portal/inbox?${query}`);
      expect(res!.status(), query).toBe(200);
      expect(await text(page.getByRole('alert')), query).toContain('must be an ISO 8601 date-time');
    }
    const res = await page.goto(`${svc.url}/portal/inbox?since=2026-11-26T06:00:00Z`);
    expect(res!.status()).toBe(200);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.goto(`${svc.url}/portal/inbox`);
    await page.getByLabel('Since (UTC)').fill('2026-11-26T06:00');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL(/since=2026-11-26T06%3A00/);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await text(page.getByRole('table').first())).toContain('Inbound messages');
    await checkPage(page, '42-inbox-date-filter');
    await page.context().close();
  });
});
