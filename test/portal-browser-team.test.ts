// Issue #27, part 2, in chromium: the customer's own team. An owner invites a user by a link
// (shown once, single-use), changes their role (what they may do follows at once), disables them
// (their open session ends at once) and enables them; every user changes their own password
// (other sessions end); the audit log names every change in words and pages. A reload after each
// action repeats nothing.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { call, createTenant, type Service, startService } from './support/harness.js';
import { createPortalUser, PASSWORD } from './support/portal.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const NEW_PASSWORD = 'another-long-passphrase-77';

describe('portal team in chromium: invite, roles, disable, password, audit', () => {
  let svc: Service;
  let browser: Browser;
  let url: string;
  let t: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@team.example';
  const member = 'member@team.example';

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    url = svc.url;
    t = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, t.customerId, owner);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function audited(action: string) {
    return svc.db.query<{ target: string | null; actor: string | null }>(
      'SELECT target, actor FROM portal_audit_log WHERE customer_id = $1 AND action = $2 ORDER BY id',
      [t.customerId, action],
    );
  }

  /** The page after a form landed on a GET address, reloaded: a GET again, nothing re-posted. */
  async function reloadIsGet(page: Page, path: RegExp) {
    expect(new URL(page.url()).pathname).toMatch(path);
    const res = await page.reload();
    expect(res!.request().method()).toBe('GET');
    expect(res!.status()).toBe(200);
  }

  const row = (page: Page, email: string) => page.locator(`#team tr[data-email="${email}"]`);

  it('invites by a link shown once; the link sets a password once; the user logs in', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.getByRole('link', { name: 'Team' }).click();
    expect(await text(row(page, owner))).toContain('This is you.');
    await page.getByLabel('Email').fill(member);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Invite' }).click();
    const link = await text(page.locator('#shown-link'));
    expect(link).toMatch(/\/portal\/invitation\/[A-Za-z0-9_-]{40,}$/);
    expect(page.url()).not.toContain(new URL(link).pathname.split('/').at(-1));
    await checkPage(page, '60-team-invited');
    await reloadIsGet(page, /^\/portal\/team$/);
    expect(await page.locator('#shown-link').count()).toBe(0);
    expect(await text(page.getByRole('status'))).toContain('no longer shown');
    expect(await row(page, member).count()).toBe(1);
    expect(await text(row(page, member))).toContain('Invited');
    // The operator's invitation of the first owner is there too, by the operator.
    expect(await audited('user.invite')).toEqual([
      { target: `${owner} (owner)`, actor: 'operator' },
      { target: `${member} (viewer)`, actor: null },
    ]);

    // The link names PUBLIC_BASE_URL (not the test's loopback address): its path, here.
    const here = `${url}${new URL(link).pathname}`;
    const guest = await (await browser.newContext()).newPage();
    await guest.goto(here);
    await guest.getByLabel(/New password/).fill(PASSWORD);
    await guest.getByRole('button', { name: 'Set password' }).click();
    await guest.waitForURL(/\/portal\/login/);
    // Single use: the link is spent.
    expect((await guest.goto(here))!.status()).toBe(404);
    await guest.context().close();

    const m = await loggedIn(browser, url, member);
    expect(await text(m.locator('.who'))).toContain('(viewer)');
    // A viewer does not manage the team.
    expect((await m.goto(`${url}/portal/team`))!.status()).toBe(403);
    await m.context().close();
    await page.reload();
    expect(await text(row(page, member))).toContain('Active');
    expect(await text(row(page, member))).not.toContain('Never');
    await page.context().close();
  });

  it('changes a role: the user can do what the new role allows at once; never their own', async () => {
    const page = await loggedIn(browser, url, owner);
    const m = await loggedIn(browser, url, member);
    await m.goto(`${url}/portal/keys`);
    expect(await m.getByRole('button', { name: 'Create key' }).count()).toBe(0);

    await page.goto(`${url}/portal/team`);
    // The owner's own row has no role form: nobody demotes themself by accident.
    expect(await row(page, owner).locator('select').count()).toBe(0);
    await page.getByLabel(`Role of ${member}`).selectOption('owner');
    await page.getByRole('button', { name: 'Change role' }).click();
    expect(await text(page.getByRole('status'))).toContain('role is changed');
    await reloadIsGet(page, /^\/portal\/team$/);
    expect(await text(row(page, member))).toContain('owner');

    await m.reload();
    expect(await m.getByRole('button', { name: 'Create key' }).count()).toBe(1);
    expect(await text(m.locator('.who'))).toContain('(owner)');

    await page.getByLabel(`Role of ${member}`).selectOption('viewer');
    await page.getByRole('button', { name: 'Change role' }).click();
    await page.getByRole('status').waitFor();
    await m.reload();
    expect(await m.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect((await audited('user.role_change')).map((r) => r.target)).toEqual([
      `${member}: viewer → owner`,
      `${member}: owner → viewer`,
    ]);
    await checkPage(page, '61-team-roles');
    await page.context().close();
    await m.context().close();
  });

  it('disables a user (confirmed): their open session ends at once; enabling lets them in again', async () => {
    const page = await loggedIn(browser, url, owner);
    const m = await loggedIn(browser, url, member);
    await page.goto(`${url}/portal/team`);
    await row(page, member).getByRole('link', { name: 'Disable…' }).click();
    expect(await text(page.getByRole('alert'))).toContain(member);
    await checkPage(page, '62-team-disable-confirm');
    await page.getByRole('button', { name: 'Disable now' }).click();
    expect(await text(page.getByRole('status'))).toContain('disabled');
    await reloadIsGet(page, /^\/portal\/team$/);
    expect(await text(row(page, member))).toContain('Disabled');
    expect(await audited('user.disable')).toEqual([{ target: member, actor: null }]);

    await m.reload();
    expect(new URL(m.url()).pathname).toBe('/portal/login');
    await m.getByLabel('Email').fill(member);
    await m.getByLabel('Password').fill(PASSWORD);
    await m.getByRole('button', { name: 'Log in' }).click();
    expect(await text(m.getByRole('alert'))).toContain('Wrong email or password.');
    await m.context().close();

    await row(page, member).getByRole('button', { name: 'Enable' }).click();
    expect(await text(page.getByRole('status'))).toContain('enabled');
    await reloadIsGet(page, /^\/portal\/team$/);
    expect(await audited('user.enable')).toEqual([{ target: member, actor: null }]);
    const back = await loggedIn(browser, url, member);
    await back.context().close();
    await page.context().close();
  });

  it('changes the own password: the current one re-checked, other sessions end, this one stays', async () => {
    const other = await loggedIn(browser, url, member);
    const page = await loggedIn(browser, url, member);
    await page.getByRole('link', { name: 'Your account' }).click();
    const form = async (current: string, next: string, repeat = next) => {
      await page.getByLabel('Current password').fill(current);
      await page.getByLabel(/^New password/).fill(next);
      await page.getByLabel('Repeat the new password').fill(repeat);
      await page.getByRole('button', { name: 'Change password' }).click();
    };
    await form('wrong-password-123', NEW_PASSWORD);
    expect(await text(page.getByRole('alert'))).toContain('Wrong password.');
    await form(PASSWORD, 'password1234');
    expect(await text(page.getByRole('alert'))).toContain('commonly breached');
    await form(PASSWORD, NEW_PASSWORD, `${NEW_PASSWORD}x`);
    expect(await text(page.getByRole('alert'))).toContain('not the same');
    await checkPage(page, '63-account-password-refused');
    await form(PASSWORD, NEW_PASSWORD);
    expect(await text(page.getByRole('status'))).toContain('password is changed');
    await reloadIsGet(page, /^\/portal\/profile$/);
    await checkPage(page, '64-account');

    await other.reload();
    expect(new URL(other.url()).pathname).toBe('/portal/login');
    await other.getByLabel('Email').fill(member);
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Log in' }).click();
    expect(await text(other.getByRole('alert'))).toContain('Wrong email or password.');
    await other.getByLabel('Password').fill(NEW_PASSWORD);
    await other.getByRole('button', { name: 'Log in' }).click();
    await other.waitForURL(`${url}/portal`);
    await other.context().close();
    expect(await audited('user.password_change')).toEqual([{ target: member, actor: null }]);
    expect(await audited('user.password_change_failed')).toEqual([{ target: member, actor: null }]);
    await page.context().close();
  });

  it('shows every change in the audit log in words, newest first, a page at a time', async () => {
    // The operator's changes are the customer's audit too: 60 new links for an invited user.
    const invited = await call(url, 'POST', `/admin/customers/${t.customerId}/users`, {
      admin: true,
      body: { email: 'later@team.example', role: 'viewer' },
    });
    for (let i = 0; i < 60; i++)
      expect(
        (await call(url, 'POST', `/admin/portal-users/${invited.body.id}/reset-password`, { admin: true })).status,
      ).toBe(200);

    const page = await loggedIn(browser, url, owner);
    const total = Number(
      (
        await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM portal_audit_log WHERE customer_id = $1', [
          t.customerId,
        ])
      )[0]!.n,
    );
    expect(total).toBeGreaterThan(60);
    await page.getByRole('link', { name: 'Audit log' }).click();
    const seen: string[] = [];
    for (let p = 0; p < 10; p++) {
      const rows = await page.locator('#audit tbody tr').allInnerTexts();
      expect(rows.length).toBeLessThanOrEqual(50);
      seen.push(...rows);
      if (p === 0) await checkPage(page, '65-audit-paged');
      const next = page.getByRole('link', { name: 'Next page' });
      if ((await next.count()) === 0) break;
      await next.click();
      await page.locator('#audit').waitFor();
    }
    // Every entry once across the pages: none skipped, none twice (the newest first: this owner's login).
    expect(seen).toHaveLength(total);
    expect(seen[0]).toContain('user.login');
    expect(seen[0]).toContain(owner);
    const target = (cells: string) => cells.split('\t')[3] ?? '';
    expect(seen.filter((r) => r.includes('user.password_reset'))).toHaveLength(60);
    expect(seen.find((r) => r.includes('user.password_reset'))).toContain('operator');
    expect(seen.find((r) => r.includes('user.password_reset'))).toContain('later@team.example');
    for (const [action, words] of <[string, string][]>[
      ['user.invite', `${member} (viewer)`],
      ['user.invitation_accept', member],
      ['user.role_change', `${member}: viewer → owner`],
      ['user.disable', member],
      ['user.enable', member],
      ['user.password_change', member],
    ])
      expect(seen.some((r) => r.includes(action) && target(r) === words)).toBe(true);
    // Targets are words, never a bare id.
    expect(seen.filter((r) => UUID.test(target(r)))).toEqual([]);
    await page.context().close();
  });
});
