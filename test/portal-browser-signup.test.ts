// Issue #35 item 3 in chromium (decision 0076): the portal's "Link a number" page with the
// provider's JS SDK replaced by the emulator's stand-in (EMBEDDED_SIGNUP_SDK_URL). It covers our
// page: the SDK loaded under the page's own Content-Security-Policy, the button, the PIN, the
// session event and the login code collected, the form posted, the provider's steps done by the
// server and the result shown after a redirect. It does not cover the provider's real SDK or popup.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { type Emulator, providerEnv, startEmulator } from './support/emulator.js';
import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser } from './support/portal.js';

describe('portal self-serve linking in chromium', () => {
  let emu: Emulator;
  let svc: Service;
  let browser: Browser;

  beforeAll(async () => {
    emu = await startEmulator();
    svc = await startService({
      role: 'api',
      env: {
        ...providerEnv(emu),
        EMBEDDED_SIGNUP_APP_ID: '1234567890',
        EMBEDDED_SIGNUP_CONFIG_ID: '987654321',
        EMBEDDED_SIGNUP_SDK_URL: `${emu.url}/__emulator/sdk.js`,
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await emu?.stop();
  });

  it('an owner links a number: PIN, button, the provider flow (stand-in), the account shown', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, 'owner@signup.example');
    const page = await loggedIn(browser, svc.url, 'owner@signup.example');
    // Each load of the SDK stand-in is a new run of the flow.
    const before = new Set(emu.state.signups.keys());
    await page.goto(`${svc.url}/portal/accounts/link`);
    const start = page.getByRole('button', { name: 'Link with WhatsApp' });
    await expect.poll(() => start.isEnabled(), { timeout: 30_000 }).toBe(true);
    await checkPage(page, 'signup-form');

    // Without a PIN the flow does not start.
    await start.click();
    expect(await text(page.locator('#signup-status'))).toContain('six-digit PIN');

    await page.getByLabel('Two-step verification PIN (6 digits)').fill('246810');
    await start.click();
    await page.waitForURL(/\/portal\/accounts\/link\?linked=/, { timeout: 60_000 });
    const shown = await text(page.locator('#signup-linked'));
    expect(shown).toContain('Signed Up Business');

    const runs = [...emu.state.signups.values()].filter((s) => !before.has(s.code) && s.exchanged);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ subscribed: true, registeredPin: '246810' });
    const accounts = (await call(svc.url, 'GET', '/chat-accounts', { key: t.key })).body.accounts as {
      id: string;
      displayName: string;
    }[];
    expect(accounts.map((a) => a.displayName)).toContain('Signed Up Business');
    expect(shown).toContain(accounts.find((a) => a.displayName === 'Signed Up Business')!.id);
    await checkPage(page, 'signup-linked');
  });

  it('a customer the operator turned it off for sees why, and no button', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    await call(svc.url, 'PATCH', `/admin/customers/${t.customerId}`, { admin: true, body: { embeddedSignup: false } });
    await createPortalUser(svc.url, t.customerId, 'owner@off.example');
    const page = await loggedIn(browser, svc.url, 'owner@off.example');
    await page.goto(`${svc.url}/portal/accounts/link`);
    expect(await text(page.locator('#signup-off'))).toContain('not available');
    expect(await page.getByRole('button', { name: 'Link with WhatsApp' }).count()).toBe(0);
  });
});
