// Two-factor sign-in and password reset by email in a real browser (chromium via playwright-core)
// against the real server and a local SMTP sink (decision 0051): enrol from the security page,
// log out and back in with a code; a used code is refused; a recovery code works once; turning
// off takes the password and a code; wrong codes are throttled like wrong passwords; a reset mail
// leads to a new password, ends the old sessions, and its link works once.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { createTenant, eventually, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD, totpCode } from './support/portal.js';
import { startSmtpSink } from './support/smtp-sink.js';

describe('portal two-factor sign-in and password reset in chromium', () => {
  let svc: Service;
  let browser: Browser;
  let sink: Awaited<ReturnType<typeof startSmtpSink>>;
  let customerId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    svc = await startService({
      role: 'api',
      env: { PORTAL_LOGIN_MAX_FAILURES: '3', SMTP_URL: sink.url, SMTP_FROM: 'no-reply@chatgate.test' },
    });
    customerId = (await createTenant(svc.url)).customerId;
    browser = await launchBrowser();
  });
  afterEach(async () => {
    await svc.db.query('DELETE FROM portal_login_failures');
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await sink?.close();
  });

  /** The code of the time step after the last one the service accepted (a fresh, unused code). */
  async function nextCode(userId: string, secret: string): Promise<string> {
    const [row] = await svc.db.query<{ last_step: string }>('SELECT last_step FROM portal_totp WHERE user_id = $1', [
      userId,
    ]);
    return totpCode(secret, (Number(row!.last_step) + 1) * 30_000 + 1000);
  }

  async function enrol(page: Page, shots?: string): Promise<{ secret: string; codes: string[] }> {
    await page.getByRole('link', { name: 'Security' }).click();
    await page.waitForURL(/\/portal\/account\/security$/);
    if (shots) await checkPage(page, `${shots}-off`);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = await text(page.locator('#totp-secret'));
    const uri = (await page.locator('#totp-uri').getAttribute('href'))!;
    expect(uri).toMatch(/^otpauth:\/\/totp\/ChatGate:/);
    expect(new URL(uri).searchParams.get('secret')).toBe(secret);
    if (shots) await checkPage(page, `${shots}-setup`);
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code from your app').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    expect(await text(page.getByRole('status'))).toBe('Two-factor sign-in is on.');
    const codes = (await text(page.locator('#recovery-codes'))).split('\n').map((c) => c.trim());
    if (shots) await checkPage(page, `${shots}-recovery-codes`);
    return { secret, codes };
  }

  async function logOutAndIn(page: Page, email: string, password = PASSWORD): Promise<void> {
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await page.waitForURL(/\/portal\/login/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  async function enterCode(page: Page, code: string): Promise<void> {
    await page.waitForURL(/\/portal\/login\/code$/);
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
  }

  it('enrols from the security page, then logs in with a code; a used code is refused', async () => {
    const email = 'enrol@browser-sign-in.example';
    const user = await createPortalUser(svc.url, customerId, email);
    const page = await loggedIn(browser, svc.url, email);
    const { secret, codes } = await enrol(page, '60-two-factor');
    expect(codes).toHaveLength(10);
    for (const c of codes) expect(c).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    // Shown once: a reload finds them gone.
    await page.reload();
    expect(await text(page.getByRole('status').filter({ hasText: 'recovery codes' }))).toContain(
      'shown once and are gone',
    );
    expect(await page.locator('#recovery-codes').count()).toBe(0);

    await logOutAndIn(page, email);
    await page.waitForURL(/\/portal\/login\/code$/);
    await checkPage(page, '63-login-code');
    // The password alone is no session.
    await page.goto(`${svc.url}/portal/keys`);
    await page.waitForURL(/\/portal\/login$/);
    await page.goto(`${svc.url}/portal/login/code`);
    const code = await nextCode(user.id, secret);
    await enterCode(page, code);
    await page.waitForURL(`${svc.url}/portal`);
    expect(await text(page.getByRole('heading', { level: 1 }))).toBe('Overview');

    // The same code again (its time step was used): refused.
    await logOutAndIn(page, email);
    await enterCode(page, code);
    expect(await text(page.getByRole('alert'))).toBe('Wrong code.');
    const audit = await svc.db.query<{ action: string }>('SELECT action FROM portal_audit_log WHERE user_id = $1', [
      user.id,
    ]);
    expect(audit.map((a) => a.action)).toContain('two_factor.enable');
    await page.context().close();
  });

  it('a recovery code logs in once; turning off takes the password and a code', async () => {
    const email = 'recovery@browser-sign-in.example';
    const user = await createPortalUser(svc.url, customerId, email);
    const page = await loggedIn(browser, svc.url, email);
    const { secret, codes } = await enrol(page);

    await logOutAndIn(page, email);
    await enterCode(page, codes[0]!.toLowerCase()); // typed in lower case: still the code
    // After a recovery code: the security page says it is spent and how many are left.
    await page.waitForURL(`${svc.url}/portal/account/security?done=recovery`);
    expect(await text(page.getByRole('status'))).toBe(
      'You logged in with a recovery code, which now no longer works. You have 9 unused recovery codes left.',
    );
    await logOutAndIn(page, email);
    await enterCode(page, codes[0]!);
    expect(await text(page.getByRole('alert'))).toBe('Wrong code.');
    await page.getByLabel('Code').fill(codes[1]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${svc.url}/portal/account/security?done=recovery`);
    expect(await text(page.getByRole('status'))).toContain('You have 8 unused recovery codes left.');
    const audit = await svc.db.query<{ action: string }>(
      `SELECT action FROM portal_audit_log WHERE user_id = $1 AND action = 'login.recovery_code'`,
      [user.id],
    );
    expect(audit).toHaveLength(2);

    await page.getByRole('link', { name: 'Security' }).click();
    expect(await text(page.locator('main'))).toContain('You have 8 unused recovery codes left.');
    await page.getByLabel('Your password').fill('wrong-password-123');
    await page.getByLabel('A code from your app, or a recovery code').fill(await nextCode(user.id, secret));
    await page.getByRole('button', { name: 'Turn off' }).click();
    expect(await text(page.getByRole('alert'))).toBe('Wrong password.');
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('A code from your app, or a recovery code').fill(await nextCode(user.id, secret));
    await page.getByRole('button', { name: 'Turn off' }).click();
    expect(await text(page.getByRole('status'))).toBe('Two-factor sign-in is off.');

    // Off: the password is enough again.
    await logOutAndIn(page, email);
    await page.waitForURL(`${svc.url}/portal`);
    await page.context().close();
  });

  it('shows a QR code of the setup key; new recovery codes are shown once, audited, and the old ones stop working', async () => {
    const email = 'qr@browser-sign-in.example';
    const user = await createPortalUser(svc.url, customerId, email);
    const page = await loggedIn(browser, svc.url, email);
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    // The QR code is an image the page draws under its CSP (a data: URL), of the otpauth:// URI.
    const qr = page.getByRole('img', { name: 'QR code of the setup key for your authenticator app' });
    await qr.waitFor();
    const src = (await qr.getAttribute('src'))!;
    expect(src).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(src.split(',')[1]!, 'base64').toString()).toMatch(/^<svg [^>]*viewBox/);
    const box = (await qr.boundingBox())!;
    expect(box.width).toBeGreaterThanOrEqual(150);
    expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    await checkPage(page, '61-two-factor-qr');
    const secret = await text(page.locator('#totp-secret'));
    await page.getByLabel('Your password').fill(PASSWORD);
    await page.getByLabel('Code from your app').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const old = (await text(page.locator('#recovery-codes'))).split('\n').map((c) => c.trim());

    // New codes: the password first.
    await page.goto(`${svc.url}/portal/account/security`);
    await page.getByLabel('Password', { exact: true }).fill('wrong-password-123');
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    expect(await text(page.getByRole('alert'))).toBe('Wrong password.');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    expect(await text(page.getByRole('status'))).toBe('New recovery codes are made: the old ones no longer work.');
    const fresh = (await text(page.locator('#recovery-codes'))).split('\n').map((c) => c.trim());
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => old.includes(c))).toEqual([]);
    await checkPage(page, '62-two-factor-new-codes');
    await page.reload();
    expect(await page.locator('#recovery-codes').count()).toBe(0);
    const audit = await svc.db.query<{ action: string }>('SELECT action FROM portal_audit_log WHERE user_id = $1', [
      user.id,
    ]);
    expect(audit.map((a) => a.action)).toEqual(
      expect.arrayContaining(['two_factor.recovery_codes', 'two_factor.recovery_codes_failed']),
    );

    // An old code no longer logs in; a new one does.
    await logOutAndIn(page, email);
    await enterCode(page, old[0]!);
    expect(await text(page.getByRole('alert'))).toBe('Wrong code.');
    await page.getByLabel('Code').fill(fresh[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${svc.url}/portal/account/security?done=recovery`);
    expect(await text(page.getByRole('status'))).toContain('You have 9 unused recovery codes left.');
    await page.context().close();
  });

  it('throttles wrong codes like wrong passwords: past the limit even the right code is refused', async () => {
    const email = 'throttle@browser-sign-in.example';
    const user = await createPortalUser(svc.url, customerId, email);
    const page = await loggedIn(browser, svc.url, email);
    const { secret } = await enrol(page);
    const right = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, Date.now() + d)));
    const wrong = ['111111', '222222', '333333', '444444', '555555'].find((c) => !right.has(c))!;

    await logOutAndIn(page, email);
    await page.waitForURL(/\/portal\/login\/code$/);
    for (let i = 0; i < 4; i++) {
      await page.getByLabel('Code').fill(wrong);
      await page.getByRole('button', { name: 'Verify' }).click();
      expect(await text(page.getByRole('alert'))).toMatch(i < 3 ? /^Wrong code\.$/ : /Too many wrong codes/);
    }
    await page.getByLabel('Code').fill(await nextCode(user.id, secret));
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await text(page.getByRole('alert'))).toMatch(/Too many wrong codes\. Try again in \d+ minutes?\./);
    expect(page.url()).toMatch(/\/portal\/login\/code$/);
    await page.context().close();
  });

  it('resets the password by email: the old sessions end and the link works once', async () => {
    const email = 'reset@browser-sign-in.example';
    const user = await createPortalUser(svc.url, customerId, email);
    const before = await loggedIn(browser, svc.url, email);

    const page = await (await browser.newContext()).newPage();
    await page.goto(`${svc.url}/portal/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send me a link' }).click();
    expect(await text(page.getByRole('status'))).toContain('If an account with that email exists');
    await checkPage(page, '65-reset-requested');
    const path = await eventually(async () => sink.resetPath(email));

    await page.goto(`${svc.url}${path}`);
    await checkPage(page, '66-reset-form');
    const fresh = 'a-brand-new-passphrase-2026';
    await page.getByLabel('New password').fill(fresh);
    await page.getByRole('button', { name: 'Save the new password' }).click();
    await page.waitForURL(/\/portal\/login\?done=reset$/);
    expect(await text(page.getByRole('status'))).toContain('Your password is changed');

    // The session from before the reset has ended.
    await before.goto(`${svc.url}/portal/keys`);
    await before.waitForURL(/\/portal\/login$/);
    // The old password no longer works, the new one does.
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await text(page.getByRole('alert'))).toBe('Wrong email or password.');
    await page.getByLabel('Password').fill(fresh);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${svc.url}/portal`);

    // The link again: refused.
    await page.goto(`${svc.url}${path}`);
    expect(await text(page.getByRole('alert'))).toContain('unknown, used or expired');
    const audit = await svc.db.query<{ action: string }>('SELECT action FROM portal_audit_log WHERE user_id = $1', [
      user.id,
    ]);
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['password.reset_requested', 'password.reset']));
    await before.context().close();
    await page.context().close();
  });
});
