// Issue #27, part 2, in chromium against the real server and the provider emulator: the broadcasts
// list, the compose form (name, schedule, a template picked from the catalog with its variables,
// per-row values), one broadcast's page (account, content, cancelled counted as cancelled), a
// repeated send creating one broadcast; the overview's charts and its numbers linking to the
// messages they count.
import crypto from 'node:crypto';

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { resetEmulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createTenant, eventually } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const MGMT_TOKEN = 'EAAG-broadcast-management-0123456789';

describe('portal broadcasts and overview in chromium', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let browser: Browser;
  let url: string;
  let pro: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@broadcasts.example';
  const viewer = 'viewer@broadcasts.example';

  beforeAll(async () => {
    live = await startLiveService();
    await resetEmulator(live.emu);
    url = live.svc.url;
    pro = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, pro.customerId, owner);
    await createPortalUser(url, pro.customerId, viewer, 'viewer');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  /** A time three days ahead, to the minute, as the form's field takes it (UTC) and as the API answers it. */
  const ahead = new Date(Math.floor((Date.now() + 3 * 86400_000) / 60_000) * 60_000);
  const aheadField = ahead.toISOString().slice(0, 16);

  const listed = async () =>
    (await call(url, 'GET', '/broadcasts', { key: pro.key })).body.broadcasts as {
      broadcastId: string;
      name: string | null;
      sendAt: string | null;
    }[];

  it('composes a named, scheduled text broadcast; a reload and a repeated send create it once; the list shows it', async () => {
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/broadcasts`);
    await page.getByRole('link', { name: 'New broadcast' }).click();
    await page.getByLabel('Name (for your list of broadcasts)').fill('December sale');
    await page.getByLabel(/^Send at/).fill(aheadField);
    await page.getByLabel('Text (for a text broadcast)').fill('Our December sale starts today');
    await page.getByLabel(/^Recipients/).fill('+15551230001,dec-1\n+15551230002,dec-2');
    await page.getByRole('button', { name: 'Check recipients' }).click();
    // The check answers in place (htmx, issue #37): its heading is the sign it is there.
    await page.getByRole('heading', { name: 'Recipients checked' }).waitFor();
    await checkPage(page, '40-broadcast-compose-checked');
    await page.getByRole('button', { name: 'Send to 2 recipient(s)' }).click();
    await page.waitForURL(/\/portal\/broadcasts\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;

    const fields = page.locator('dl.broadcast-fields');
    expect(await text(fields)).toContain('December sale');
    expect(await text(fields)).toContain('Our December sale starts today');
    expect(await text(fields)).toContain('Test account (+15550100200)');
    expect(await text(fields)).toContain(`${aheadField.replace('T', ' ')}:00Z`);
    expect(await text(page.locator('.bstatus'))).toBe('active');
    await checkPage(page, '41-broadcast-detail');

    // A reload is a GET of the page; nothing is sent again.
    expect((await page.reload())!.request().method()).toBe('GET');
    // The same send form posted again (Back and send, a double click): the same broadcast.
    const client = new PortalClient(url);
    await client.login(owner);
    const again = await client.submit('/portal/broadcasts/new', '/portal/broadcasts', {
      request: JSON.stringify({
        externalId: 'portal-repeat-check',
        name: 'Twice',
        chatAccountId: pro.accountId,
        content: { type: 'text', text: 'Once only' },
        recipients: [{ phoneE164: '+15551230009' }],
        sendAt: ahead.toISOString(),
      }),
    });
    const repeat = await client.submit('/portal/broadcasts/new', '/portal/broadcasts', {
      request: JSON.stringify({
        externalId: 'portal-repeat-check',
        name: 'Twice',
        chatAccountId: pro.accountId,
        content: { type: 'text', text: 'Once only' },
        recipients: [{ phoneE164: '+15551230009' }],
        sendAt: ahead.toISOString(),
      }),
    });
    expect(again.status).toBe(303);
    // A send the API refuses (sendAt past the messages' lifetime) shows the form again, filled in, the problem in words.
    const refused = await client.submit('/portal/broadcasts/new', '/portal/broadcasts', {
      request: JSON.stringify({
        externalId: 'portal-too-late',
        name: 'Too late',
        chatAccountId: pro.accountId,
        content: { type: 'text', text: 'Much later' },
        recipients: [{ phoneE164: '+15551230010' }],
        sendAt: new Date(Date.now() + 20 * 86400_000).toISOString(),
      }),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('value="Too late"');
    expect(refused.text).toContain('Much later</textarea>');
    expect(refused.text).toMatch(/Send at.*expire|expire.*Send at/s);
    expect(repeat.headers.get('location')).toBe(again.headers.get('location'));
    const all = await listed();
    expect(all.filter((b) => b.name === 'December sale')).toHaveLength(1);
    expect(all.filter((b) => b.name === 'Twice')).toHaveLength(1);
    expect(all.filter((b) => b.name === 'Too late')).toHaveLength(0);
    expect(all.find((b) => b.broadcastId === id)!.sendAt).toBe(ahead.toISOString());

    // The list: name, account, created, progress, status.
    await page.goto(`${url}/portal/broadcasts`);
    const row = page.locator('tr.broadcast-row', { hasText: 'December sale' });
    expect(await text(row)).toContain('Test account');
    expect(await text(row)).toContain('0 of 2 processed');
    expect(await text(row.locator('.bstatus'))).toBe('active');
    expect(await text(page.locator('thead'))).toMatch(/Name\s+Account\s+Created\s+Progress\s+Status/);
    await checkPage(page, '42-broadcast-list');

    // Cancelled: counted as cancelled, not failed, on the page and in its links.
    await page.getByRole('link', { name: 'December sale' }).click();
    await page.getByRole('link', { name: 'Cancel the broadcast…' }).click();
    await page.getByRole('button', { name: 'Cancel the broadcast' }).click();
    expect(await text(page.locator('.bstatus'))).toBe('cancelled');
    expect(await text(page.locator('td[data-status="cancelled"]'))).toBe('2');
    expect(await text(page.locator('td[data-status="failed"]'))).toBe('0');
    await page.locator('td[data-status="cancelled"] a').click();
    await page.waitForURL(/\/portal\/messages\?/);
    expect(new URL(page.url()).searchParams.get('status')).toBe('cancelled');
    expect(await page.locator('main tbody tr').count()).toBe(2);
    await page.context().close();
  });

  it('picks a template from the catalog, shows its variables as fields, fills the empty one from each row', async () => {
    const wabaId = `waba${crypto.randomBytes(5).toString('hex')}`;
    await live.emu.waba(wabaId, { managementToken: MGMT_TOKEN });
    await live.emu.seedTemplates(wabaId, [
      { name: 'order_ready', components: [{ type: 'BODY', text: 'Hello {{1}}, your order {{2}} is ready.' }] },
      { name: 'not_yet', status: 'PENDING', components: [{ type: 'BODY', text: 'Soon {{1}}' }] },
    ]);
    await createAccount(url, pro.customerId, {
      displayName: 'Catalog line',
      phoneNumber: '+15550100300',
      official: {
        phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
        wabaId,
        accessToken: 'EAAG-send-token',
        managementToken: MGMT_TOKEN,
      },
    });
    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/broadcasts/new`);
    const picker = page.getByLabel('Template (approved ones can be sent)');
    // A template not approved is listed but cannot be chosen.
    expect(await picker.locator('option', { hasText: 'not_yet' }).isDisabled()).toBe(true);
    await picker.selectOption({ label: 'order_ready (en_US)' });
    await page.getByRole('button', { name: "Show the template's variables" }).click();
    await page.locator('#template-vars').waitFor();
    expect(await page.getByLabel('Template', { exact: true }).isChecked()).toBe(true);
    expect(await text(page.locator('#template-vars'))).toContain('Hello {{1}}, your order {{2}} is ready.');
    await checkPage(page, '43-broadcast-template-variables');
    await page.getByLabel('Variable {{1}}').fill('Ana');
    // {{2}} left empty: each row's third column fills it; the row without one is left out, in words.
    await page.getByLabel(/^Recipients/).fill('+15551240001,tpl-1,A-17\n+15551240002,tpl-2,B-22\n+15551240003,tpl-3');
    await page.getByRole('button', { name: 'Check recipients' }).click();
    await page.getByRole('heading', { name: 'Recipients checked' }).waitFor();
    const bad = page.locator('tr.bad-row');
    expect(await bad.count()).toBe(1);
    expect(await text(bad)).toContain('no value for {{2}}');
    await page.getByRole('button', { name: 'Send to 2 recipient(s)' }).click();
    await page.waitForURL(/\/portal\/broadcasts\/[0-9a-f-]{36}$/);
    const fields = page.locator('dl.broadcast-fields');
    expect(await text(fields)).toContain('order_ready');
    expect(await text(fields)).toContain('Catalog line (+15550100300)');
    expect(await text(fields)).toContain("each recipient's own");
    // Issue #37, defect 6: the value set for everyone is shown as such, not as each recipient's own.
    expect(await text(fields.locator('.template-values'))).toMatch(
      /^Value 1: Ana \(the same for every recipient\)\s+Value 2: each recipient's own$/,
    );
    await eventually(async () => {
      await page.reload();
      return (await page.locator('.bstatus').textContent()) === 'completed';
    }, 30_000);
    const sentTo = (digits: string) =>
      live.emu
        .sent()
        .filter((s) => s.to === digits)
        .map((s) => JSON.stringify(s.payload));
    expect(sentTo('15551240001').join()).toMatch(/Ana.*A-17/);
    expect(sentTo('15551240002').join()).toMatch(/Ana.*B-22/);
    expect(sentTo('15551240003')).toEqual([]);
    await page.context().close();
  });

  it('a viewer reads the list and a broadcast, and is offered no compose form', async () => {
    const page = await loggedIn(browser, url, viewer);
    await page.goto(`${url}/portal/broadcasts`);
    expect(await page.getByRole('link', { name: 'New broadcast' }).count()).toBe(0);
    expect(await text(page.locator('main'))).toContain('Your role is viewer');
    expect(await page.locator('tr.broadcast-row').count()).toBeGreaterThan(0);
    await page.goto(`${url}/portal/broadcasts/new`);
    expect(await page.locator('form#compose').count()).toBe(0);
    await page.context().close();
  });

  it('overview: charts with text, per-account figures, every number linking to the list it counts', async () => {
    const t = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, t.customerId, 'owner@overview.example');
    // One delivered, one failed by the provider, one stopped by the suppression list, one cancelled.
    const sup = await call(url, 'POST', `/chat-accounts/${t.accountId}/suppressions`, {
      key: t.key,
      body: { phone: '+15552220003' },
    });
    expect(sup.status).toBe(201);
    await live.emu.rule({ to: '15552220002', asyncFailure: { code: 131026, title: 'Message undeliverable' } });
    const b = await call(url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: 'overview-b',
        content: { type: 'text', text: 'Overview' },
        recipients: ['+15552220001', '+15552220002', '+15552220003'].map((phoneE164) => ({ phoneE164 })),
      },
    });
    expect(b.status).toBe(201);
    const later = await call(url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: 'overview-later',
        to: { type: 'phone', phoneE164: '+15552220004' },
        content: { type: 'text', text: 'Later' },
        sendAt: ahead.toISOString(),
      },
    });
    expect(later.status).toBe(201);
    expect((await call(url, 'POST', '/messages/overview-later/cancel', { key: t.key })).status).toBe(200);
    await eventually(async () => {
      const r = await call(url, 'GET', `/broadcasts/${b.body.broadcastId}`, { key: t.key });
      return r.body.counts.delivered === 1 && r.body.counts.failed === 2;
    }, 30_000);

    const page = await loggedIn(browser, url, 'owner@overview.example');
    const row = page.locator(`tr[data-account="${t.accountId}"]`);
    const figure = (name: string) => text(row.locator(`td[data-figure="${name}"]`));
    expect(await figure('delivered')).toBe('1');
    expect(await figure('failed')).toBe('2');
    expect(await figure('suppressed')).toBe('1');
    expect(await figure('cancelled')).toBe('1');
    expect(await figure('sent')).toBe('0');

    // Charts: SVG with a text alternative; the usage scale follows the data, the quota is a marker.
    const usage = page.locator('svg.usage-chart');
    expect(await usage.getAttribute('data-quota-on-scale')).toBe('false');
    expect(Number(await usage.getAttribute('data-top'))).toBeLessThanOrEqual(10);
    expect(await usage.locator('desc').textContent()).toContain('quota is above the scale');
    expect(await page.locator('svg.status-chart desc').textContent()).toMatch(/failed 2, cancelled 1/);
    await checkPage(page, '44-overview');

    // The totals link to the list with status and period; the list shows as many rows.
    await page.locator('table.status-totals td[data-status="cancelled"] a').click();
    await page.waitForURL(/\/portal\/messages\?/);
    const q = new URL(page.url()).searchParams;
    expect(q.get('status')).toBe('cancelled');
    expect(q.get('since')).toMatch(/^\d{4}-\d{2}-\d{2}T00:00$/);
    expect(await page.locator('main tbody tr').count()).toBe(1);
    expect(await page.getByLabel('Since (UTC)').inputValue()).toBe(q.get('since'));

    // An account's figure links to that account's list.
    await page.goto(`${url}/portal`);
    await row.locator('td[data-figure="failed"] a').click();
    await page.waitForURL(/\/portal\/messages\?/);
    expect(new URL(page.url()).searchParams.get('chatAccountId')).toBe(t.accountId);
    expect(await page.locator('main tbody tr').count()).toBe(2);
    // Suppressed: the failed ones with the suppression list's error code (a filter of its own).
    await page.goBack();
    await row.locator('td[data-figure="suppressed"] a').click();
    await page.waitForURL(/errorCode=RECIPIENT_OPTED_OUT/);
    expect(await page.locator('main tbody tr').count()).toBe(1);
    expect(await text(page.locator('main tbody tr'))).toContain('+15552220003');
    expect(await page.getByLabel('Error code').inputValue()).toBe('RECIPIENT_OPTED_OUT');
    await page.context().close();
  });
});
