// Issue #27's "done when", on a 390 px phone screen in chromium against the real server and the
// provider emulator: a new owner invites a colleague, turns on two-factor sign-in, finds why a
// given message failed (every attempt and event on its page) and exports last week's failed
// messages as CSV. No page of the journey scrolls sideways.
import fs from 'node:fs';

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { launchBrowser, text } from './support/browser.js';
import { startLiveService } from './support/emulator.js';
import { call, createTenant, eventually } from './support/harness.js';
import { createPortalUser, PASSWORD, totpCode } from './support/portal.js';

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

describe('portal on a phone: a new owner’s first hour (#27 done when)', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let browser: Browser;
  let url: string;
  let t: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'new-owner@done-when.example';
  const colleague = 'colleague@done-when.example';
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    live = await startLiveService({ RETRY_TIME_SCALE: '0.001' });
    url = live.svc.url;
    t = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, t.customerId, owner);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await live?.stop();
  });

  async function phonePage(): Promise<Page> {
    const context = await browser.newContext({ ...PHONE, acceptDownloads: true });
    contexts.push(context);
    return context.newPage();
  }

  /** The page fits the phone's width: nothing scrolls sideways (wide tables scroll in their box). */
  async function fits(page: Page, what: string) {
    const { scroll, width } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      width: window.innerWidth,
    }));
    expect(scroll, `${what}: the page is ${scroll} px wide on a ${width} px screen`).toBeLessThanOrEqual(width);
  }

  async function logIn(page: Page, email: string) {
    await page.goto(`${url}/portal/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('invites a colleague, turns on 2FA, finds why a message failed, exports last week’s failures', async () => {
    // A message that fails: the provider is unavailable once (retried), then refuses it for good.
    await live.emu.rule({ to: '15557790101', times: 1, httpStatus: 503, error: { code: 2, message: 'Unavailable' } });
    await live.emu.rule({
      to: '15557790101',
      times: 1,
      httpStatus: 400,
      error: { code: 131026, message: 'Message undeliverable' },
    });
    const failed = await call(url, 'POST', '/messages', {
      key: t.key,
      body: {
        chatAccountId: t.accountId,
        externalId: 'order-4711-confirmation',
        to: { type: 'phone', phoneE164: '+15557790101' },
        content: { type: 'text', text: 'Your order 4711 is confirmed' },
      },
    });
    expect(failed.status, JSON.stringify(failed.body)).toBe(201);
    const ok = await call(url, 'POST', '/messages', {
      key: t.key,
      body: {
        chatAccountId: t.accountId,
        externalId: 'order-4712-confirmation',
        to: { type: 'phone', phoneE164: '+15557790102' },
        content: { type: 'text', text: 'Your order 4712 is confirmed' },
      },
    });
    expect(ok.status).toBe(201);
    const messageId = failed.body.messageId as string;
    await eventually(
      async () => (await call(url, 'GET', `/messages/${messageId}`, { key: t.key })).body.status === 'failed',
      60_000,
    );

    // 1. Invite a colleague as an owner; the link (shown once) sets their password; they log in.
    const page = await phonePage();
    await logIn(page, owner);
    await page.waitForURL(/\/portal$/);
    await fits(page, 'overview');
    await page.getByRole('link', { name: 'Team' }).click();
    await page.getByLabel('Email').fill(colleague);
    await page.getByLabel('Role', { exact: true }).selectOption('owner');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = await text(page.locator('#shown-link'));
    await fits(page, 'team');
    const guest = await phonePage();
    await guest.goto(`${url}${new URL(link).pathname}`);
    await guest.getByLabel(/New password/).fill(PASSWORD);
    await guest.getByRole('button', { name: 'Set password' }).click();
    await guest.waitForURL(/\/portal\/login/);
    await logIn(guest, colleague);
    await guest.waitForURL(/\/portal$/);
    expect(await text(guest.locator('.who'))).toContain(colleague);

    // 2. Turn on two-factor sign-in: the setup key, the password and a first code; recovery codes once.
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = await text(page.locator('#totp-secret'));
    await fits(page, 'two-factor set-up');
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code from your app').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    expect(await text(page.getByRole('status'))).toBe('Two-factor sign-in is on.');
    expect((await text(page.locator('#recovery-codes'))).split('\n')).toHaveLength(10);
    await fits(page, 'recovery codes');

    // 3. Find why the message failed: the failed list, the message, every attempt and event.
    await page.getByRole('link', { name: 'Messages' }).first().click();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=failed/);
    await fits(page, 'failed messages');
    await page.getByRole('link', { name: 'order-4711-confirmation' }).click();
    await page.waitForURL(new RegExp(`/portal/messages/${messageId}$`));
    const timeline = await text(page.locator('ol.timeline'));
    expect(timeline).toMatch(/Attempt 1 failed, to be tried again: .*Unavailable/);
    expect(timeline).toMatch(/131026/);
    expect(timeline).toMatch(/Message undeliverable/);
    expect(await page.locator('main').innerText()).not.toMatch(/\bnull\b/);
    await fits(page, 'message page');

    // 4. Last week's failed messages as CSV.
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 16);
    await page.goto(`${url}/portal/messages?status=failed&since=${weekAgo}`);
    await fits(page, 'last week’s failures');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    expect(csv).toContain('order-4711-confirmation');
    expect(csv).not.toContain('order-4712-confirmation');
  }, 180_000);
});
