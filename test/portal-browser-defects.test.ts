// Issue #37, "Defects", in chromium against the real server and the provider emulator: each
// defect's reproduction, which failed before its fix (decision 0066).
import fs from 'node:fs';

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PASSWORD, PortalClient } from './support/portal.js';

const nowS = () => Math.floor(Date.now() / 1000);
const conversation = (accountId: string, digits: string) => `/portal/conversations/${accountId}/%2B${digits}`;

describe('portal defects of issue #37 in chromium', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let svc: Service;
  let emu: Emulator;
  let browser: Browser;
  let t: OfficialCustomer;
  const owner = 'owner@defects.example';

  /** An inbound text from `from` now, through the emulator's signed webhook: the reply window opens. */
  async function inbound(from: string, body: string) {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from,
        name: 'Ada Lovelace',
        timestamp: nowS(),
        message: { type: 'text', text: { body } },
      }),
    });
    expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
  }

  async function send(externalId: string, to: string, content: Record<string, unknown>) {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { chatAccountId: t.accountIds[0]!, externalId, to: { type: 'phone', phoneE164: to }, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.messageId as string;
  }

  async function statusOf(id: string): Promise<string> {
    return (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body.status as string;
  }

  /**
   * Clicks "Check recipients" and waits for its answer in place: htmx swaps the new page's <main>
   * in, a new heading with it (a form posted without script would load a new page).
   */
  async function checkRecipients(page: Page) {
    await page.locator('main > h1').evaluate((h) => h.setAttribute('data-before-check', ''));
    await page.getByRole('button', { name: 'Check recipients' }).click();
    await page.locator('main > h1:not([data-before-check])').waitFor();
  }

  /** The page's width beyond the window (0 when nothing scrolls sideways). */
  const overflow = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  beforeAll(async () => {
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    ({ svc, emu } = live);
    await resetEmulator(emu);
    t = await officialCustomer(svc.url, emu, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, owner);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('1: a reply over 4,096 characters is refused with a live counter; a failed message says why in the conversation', async () => {
    const digits = '16505553701';
    await inbound(digits, 'Can you tell me everything?');
    // A 5,000-character text through the API (its bound is 10,000): the provider refuses it.
    const failed = await send('defect-1-api', `+${digits}`, { type: 'text', text: 'x'.repeat(5000) });
    await eventually(async () => (await statusOf(failed)) === 'failed', 60_000);

    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}${conversation(t.accountIds[0]!, digits)}`);
    const failedItem = page.locator('ol.conversation li.out[data-status="failed"]');
    expect(await text(failedItem.locator('.failure'))).toMatch(/^Not delivered: .+\(INVALID_PARAMETER\)/);

    const field = page.getByRole('textbox', { name: 'Reply' });
    await field.fill('y'.repeat(5000));
    expect(await text(page.locator('#reply-text-count'))).toBe(
      '5,000 characters: 904 over the limit of 4,096. Shorten the text or send it in parts.',
    );
    expect(await field.evaluate((f) => (f as HTMLTextAreaElement).validity.valid)).toBe(false);
    await field.fill('y'.repeat(4096));
    expect(await text(page.locator('#reply-text-count'))).toBe('4,096 of at most 4,096 characters.');
    expect(await field.evaluate((f) => (f as HTMLTextAreaElement).validity.valid)).toBe(true);
    await checkPage(page, '37-01-conversation-counter');

    // The server refuses it too (a browser without the script, a form posted by hand): nothing is sent.
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const refused = await client.submit(
      conversation(t.accountIds[0]!, digits),
      `${conversation(t.accountIds[0]!, digits)}/reply`,
      {
        kind: 'text',
        externalId: 'defect-1-portal',
        text: 'z'.repeat(5000),
      },
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('is 5,000 characters long; the provider delivers at most 4,096');
    expect(refused.text).not.toContain('on its way');
    const mine = await call(svc.url, 'GET', '/messages?externalId=defect-1-portal', { key: t.key });
    expect(mine.status).toBe(200);
    expect(mine.body.messages).toEqual([]);

    // A broadcast's text has the same limit, counted as typed and checked at "Check recipients".
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('b'.repeat(4100));
    expect(await text(page.locator('#text-count'))).toBe(
      '4,100 characters: 4 over the limit of 4,096. Shorten the text or send it in parts.',
    );
    await page.locator('#text').evaluate((el) => (el as HTMLTextAreaElement).setCustomValidity(''));
    await page.getByRole('textbox', { name: /^Recipients/ }).fill('+15551237101');
    await checkRecipients(page);
    expect(await text(page.locator('.error'))).toContain(
      'Text: is 4,100 characters long; the provider delivers at most 4,096 in one message',
    );
    expect(await page.getByRole('button', { name: /^Send to/ }).count()).toBe(0);
    await page.context().close();
  });

  it('3: no page is wider than the window at 1280 and 390 px with a 200-character key name and a long webhook URL', async () => {
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const longName = `support-${'k'.repeat(192)}`;
    const key = await client.submit('/portal/keys', '/portal/keys', {
      name: longName,
      chatAccountId: '',
      templateAccess: 'none',
      password: PASSWORD,
    });
    expect(key.status).toBe(303);
    const longUrl = `https://hooks.example.com/${'segment/'.repeat(240)}end?token=${'t'.repeat(60)}`;
    const hook = await client.submit('/portal/webhooks', '/portal/webhooks', {
      url: longUrl,
      description: `d${'e'.repeat(400)}`,
      events: 'message.status',
    });
    expect(hook.status, hook.text.slice(0, 500)).toBe(303);
    const endpoints = (await call(svc.url, 'GET', '/webhook-endpoints', { key: t.key })).body.webhookEndpoints as {
      id: string;
      url: string;
    }[];
    const endpointId = endpoints.find((e) => e.url === longUrl)!.id;
    // Ordinary messages for the message list.
    for (const n of [1, 2, 3]) await send(`defect-3-${n}`, `+1650555380${n}`, { type: 'text', text: `hello ${n}` });

    const page = await loggedIn(browser, svc.url, owner);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of [
        '/portal/keys',
        '/portal/webhooks',
        `/portal/webhooks/${endpointId}`,
        '/portal/audit',
        '/portal/messages',
      ]) {
        await page.goto(`${svc.url}${path}`);
        await page.locator('main').waitFor();
        expect(await overflow(page), `${path} at ${width} px`).toBe(0);
      }
    }
    await page.goto(`${svc.url}/portal/keys`);
    expect(await page.locator('main').innerText()).toContain(longName);
    await checkPage(page, '37-03-keys-long-name');
    await page.context().close();
  });

  it('3: a host name label over 63 characters is refused in the webhook form', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/webhooks`);
    await page.getByLabel('HTTPS URL').fill(`https://${'a'.repeat(64)}.example.com/hook`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await text(page.locator('.error'))).toMatch(/63 characters/);
    const endpoints = (await call(svc.url, 'GET', '/webhook-endpoints', { key: t.key })).body.webhookEndpoints as {
      url: string;
    }[];
    expect(endpoints.filter((e) => e.url.includes('a'.repeat(64)))).toEqual([]);
    await page.context().close();
  });

  it('4: a broadcast send time has one bound, in the label and the refusal, checked at "Check recipients"', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    const label = await text(page.locator('label[for="sendAt"]'));
    expect(label).toBe('Send at (UTC; empty: now; from 1 minute to 7 days ahead)');
    const tenDays = new Date(Date.now() + 10 * 86400_000).toISOString().slice(0, 16);
    for (const when of ['2020-06-01T09:00', '2027-06-01T09:00', tenDays]) {
      await page.getByLabel(/^Send at/).fill(when);
      await page.getByLabel('Text (for a text broadcast)').fill('Spring sale');
      await page.getByRole('textbox', { name: /^Recipients/ }).fill('+15551237001');
      await checkRecipients(page);
      const problem = await text(page.locator('.error'));
      expect(problem, when).toMatch(
        /Send at: must be from 1 minute to 7 days ahead: between now and \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(UTC\)/,
      );
      expect(problem).not.toContain('35 days');
      expect(await page.getByRole('button', { name: /^Send to/ }).count(), when).toBe(0);
    }
    await checkPage(page, '37-04-broadcast-send-at');
    await page.context().close();
  });

  it('5: the timeline lists the accepted attempt before the failed receipt it led to', async () => {
    const digits = '16505553705';
    await emu.rule({ to: digits, times: 1, asyncFailure: { code: 131026, title: 'Message undeliverable' } });
    const id = await send('defect-5', `+${digits}`, { type: 'text', text: 'hello' });
    await eventually(async () => (await statusOf(id)) === 'failed', 60_000);
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/messages/${id}`);
    const steps = await page.locator('ol.timeline > li').allInnerTexts();
    const attempt = steps.findIndex((s) => s.includes('Attempt 1: the provider accepted'));
    const receipt = steps.findIndex((s) => s.includes('Receipt: failed after it was sent'));
    expect(attempt, steps.join('\n')).toBeGreaterThan(0);
    expect(receipt, steps.join('\n')).toBeGreaterThan(attempt);
    await page.context().close();
  });

  it('7: a refused recipient row says what is wrong in plain words, naming the other row by its line', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Hello');
    await page
      .getByRole('textbox', { name: /^Recipients/ })
      .fill('+15551238001,a\n+15551238002,b\n+15551238001,c\n+15551238003,b');
    await checkRecipients(page);
    const bad = await page.locator('tr.bad-row').allInnerTexts();
    expect(bad).toHaveLength(2);
    expect(bad[0]).toContain('The phone number is already on line 1: each number is sent one message.');
    expect(bad[1]).toContain('The reference (second column) is already on line 2: each row needs its own.');
    expect(await page.locator('main').innerText()).not.toMatch(/recipients\.\d|phoneE164|externalId "/);
    await page.context().close();
  });

  it('8: Back after a broadcast is a GET of the form; a resubmission is audited once; 25,000 refused rows are counted, 100 listed', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Name (for your list of broadcasts)').fill('Back button');
    await page.getByLabel('Text (for a text broadcast)').fill('Hello once');
    await page.getByRole('textbox', { name: /^Recipients/ }).fill('+15551238101');
    await checkRecipients(page);
    await page.getByRole('button', { name: 'Send to 1 recipient(s)' }).click();
    await page.waitForURL(/\/portal\/broadcasts\/[0-9a-f-]{36}$/);
    const broadcastId = page.url().split('/').pop()!;
    // Back lands on the compose form's GET address (no "Confirm form resubmission" page).
    await page.goBack();
    expect(new URL(page.url()).pathname).toBe('/portal/broadcasts/new');
    await page.getByRole('heading', { name: 'New broadcast' }).waitFor();

    // The same send posted again (Back and send, a double click): one broadcast, one audit row.
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const request = JSON.stringify({
      externalId: 'portal-defect-8-repeat',
      name: 'Resubmitted',
      chatAccountId: t.accountIds[0],
      content: { type: 'text', text: 'Once only' },
      recipients: [{ phoneE164: '+15551238102' }],
    });
    const first = await client.submit('/portal/broadcasts/new', '/portal/broadcasts', { request });
    const again = await client.submit('/portal/broadcasts/new', '/portal/broadcasts', { request });
    expect(first.status).toBe(303);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    const audit = await client.get('/portal/audit');
    expect(audit.text.split('portal-defect-8-repeat').length - 1).toBe(1);
    expect(audit.text.split('Back button').length - 1).toBe(1);
    expect(broadcastId).toMatch(/^[0-9a-f-]{36}$/);

    // 30,000 pasted rows: 5,000 go, 25,000 are over the limit; the first 100 are listed, the rest counted.
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Many');
    const many = Array.from({ length: 30_000 }, (_v, i) => `+1556${String(1_000_000 + i)}`).join('\n');
    // Set at once, as a paste does (typing 390 KB key by key would take minutes).
    await page.locator('#recipients').evaluate((el, v) => ((el as HTMLTextAreaElement).value = v), many);
    await checkRecipients(page);
    await page.getByRole('heading', { name: 'Recipients checked' }).waitFor();
    expect(await text(page.locator('#check-h + p'))).toContain('30000 row(s): 5000 will be sent, 25000 left out');
    expect(await text(page.locator('table caption'))).toBe('Rows left out: the first 100 of 25,000');
    expect(await page.locator('tr.bad-row').count()).toBe(100);
    await page.context().close();
  }, 120_000);

  it('9: the error-code filter is a case-insensitive choice list; period presets; times in the local zone on request', async () => {
    const digits = '16505553709';
    await emu.rule({
      to: digits,
      times: 1,
      httpStatus: 400,
      error: { code: 131009, message: 'Parameter value is not valid' },
    });
    const id = await send('defect-9', `+${digits}`, { type: 'text', text: 'hello' });
    await eventually(async () => (await statusOf(id)) === 'failed', 60_000);

    // A browser in India (UTC+05:30), to see local times.
    const context = await browser.newContext({ timezoneId: 'Asia/Kolkata' });
    const page = await context.newPage();
    await page.goto(`${svc.url}/portal/login`);
    await page.getByLabel('Email').fill(owner);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${svc.url}/portal`);

    await page.goto(`${svc.url}/portal/messages`);
    const codes = await page
      .locator('datalist#error-codes option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(codes).toContain('RECIPIENT_OPTED_OUT');
    expect(codes).toContain('INVALID_PARAMETER');
    await page.getByLabel('Error code').fill('invalid_parameter');
    await page.getByLabel('Period').selectOption({ label: 'the last hour' });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/period=1h/);
    const rows = page.locator('main tbody tr');
    expect(await rows.count()).toBeGreaterThan(0);
    expect(await rows.allInnerTexts()).toContainEqual(expect.stringContaining('defect-9'));
    for (const row of await rows.allInnerTexts()) expect(row).toContain('INVALID_PARAMETER');
    expect(await page.getByLabel('Period').inputValue()).toBe('1h');

    // UTC by default; "Local times" shows the browser's zone with its offset, and is remembered.
    const created = page.locator('main tbody tr', { hasText: 'defect-9' }).locator('time').first();
    const utc = await text(created);
    expect(utc).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    const toggle = page.getByRole('button', { name: 'Local times' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    const iso = (await created.getAttribute('datetime'))!;
    const local = new Date(Date.parse(iso) + 330 * 60_000).toISOString().slice(0, 19).replace('T', ' ');
    expect(await text(created)).toBe(`${local} (UTC+05:30)`);
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    await page.reload();
    expect(await text(page.locator('main tbody tr', { hasText: 'defect-9' }).locator('time').first())).toBe(
      `${local} (UTC+05:30)`,
    );
    await checkPage(page, '37-09-messages-filters-local-times');
    await page.getByRole('button', { name: 'Local times' }).click();
    expect(await text(page.locator('main tbody tr', { hasText: 'defect-9' }).locator('time').first())).toBe(utc);
    await context.close();
  });

  it('10: the CSV export has a byte order mark, the message text, and phone numbers a broadcast imports again', async () => {
    for (const n of [1, 2])
      await send(`defect-10-${n}`, `+1650555310${n}`, { type: 'text', text: `Grüße, ça va? 😀 ${n}` });
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/messages?externalId=defect-10-`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV' }).click(),
    ]);
    const file = (await download.path())!;
    const bytes = fs.readFileSync(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.toString('utf8').slice(1).split('\r\n');
    const head = lines[0]!.split(',');
    expect(head).toContain('Message text');
    const rows = lines.slice(1, 3).map((l) => l.split(','));
    expect(rows.map((r) => r[head.indexOf('Recipient')])).toEqual(['+16505553102', '+16505553101']);
    expect(lines.slice(1).join('\n')).toContain('"Grüße, ça va? 😀 2"');

    // The file as downloaded is a broadcast's recipients file.
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Follow-up');
    await page.getByLabel(/CSV file/).setInputFiles(file);
    await checkRecipients(page);
    await page.getByRole('heading', { name: 'Recipients checked' }).waitFor();
    expect(await text(page.locator('#check-h + p'))).toContain('2 row(s): 2 will be sent, 0 left out');
    await page.context().close();
  });

  it('11: no dead ends: Back after revoking a key or deleting an endpoint, a form too large, a disabled user', async () => {
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const key = await client.submit('/portal/keys', '/portal/keys', {
      name: 'defect-11-key',
      chatAccountId: '',
      templateAccess: 'none',
      password: PASSWORD,
    });
    expect(key.status).toBe(303);
    const hook = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'https://hooks.example.com/defect-11', events: ['message.status'] },
    });
    expect(hook.status).toBe(201);
    const member = 'member@defects.example';
    await createPortalUser(svc.url, t.customerId, member, 'viewer');

    const page = await loggedIn(browser, svc.url, owner);
    // Back (and reload) after revoking a key: it says the key is revoked, and leads back to the keys.
    await page.goto(`${svc.url}/portal/keys`);
    await page.locator('tr', { hasText: 'defect-11-key' }).getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await page.waitForURL(/done=revoked/);
    await page.goBack();
    await page.reload();
    expect(new URL(page.url()).pathname).toMatch(/^\/portal\/keys\/[0-9a-f-]{36}\/revoke$/);
    expect(await text(page.locator('h1'))).toBe('Key already revoked');
    await page.getByRole('link', { name: 'Back to API keys' }).click();
    await page.waitForURL(`${svc.url}/portal/keys`);

    // Back after deleting an endpoint: not found, in words, with the way back to the endpoints.
    await page.goto(`${svc.url}/portal/webhooks/${hook.body.id as string}`);
    await page.getByRole('link', { name: 'Delete endpoint…' }).click();
    await page.getByRole('button', { name: 'Delete the endpoint' }).click();
    await page.waitForURL(/done=deleted/);
    await page.goBack();
    const gone = await page.reload();
    expect(gone!.status()).toBe(404);
    expect(await text(page.locator('main'))).toContain('may have been deleted');
    await checkPage(page, '37-11-deleted-endpoint');
    await page.getByRole('link', { name: 'Back to Webhooks' }).click();
    await page.waitForURL(`${svc.url}/portal/webhooks`);

    // A form too large: the refusal leads back to the form.
    await page.goto(`${svc.url}/portal/broadcasts/new`);
    await page.getByLabel('Text (for a text broadcast)').fill('Big');
    await page.getByLabel(/CSV file/).setInputFiles({
      name: 'big.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('+15551230001\n'.repeat(120_000)),
    });
    await checkRecipients(page);
    await page.getByText(/The form is larger than/).waitFor();
    await page.getByRole('link', { name: 'Back to the form' }).click();
    await page.waitForURL(`${svc.url}/portal/broadcasts/new`);
    await page.getByRole('button', { name: 'Check recipients' }).waitFor();

    // A disabled user is not offered "Disable now" again.
    await page.goto(`${svc.url}/portal/team`);
    await page.locator('tr', { hasText: member }).getByRole('link', { name: 'Disable…' }).click();
    const confirm = page.url();
    await page.getByRole('button', { name: 'Disable now' }).click();
    await page.waitForURL(/done=disabled/);
    await page.goto(confirm);
    expect(await text(page.locator('h1'))).toBe('User already disabled');
    expect(await page.getByRole('button', { name: 'Disable now' }).count()).toBe(0);
    await page.context().close();
  });

  it('12: the small things: invite email, password rules, the sender in words, the overview and the plan', async () => {
    // An invitation to something that is no email address is refused by the server (the browser's own check aside).
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const bad = await client.submit('/portal/team', '/portal/team', {
      email: '<script>alert(1)</script>@x.test',
      role: 'viewer',
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('must be an email address, such as ana@example.com');
    expect(bad.text).not.toContain('<script>alert(1)');
    const team = await client.get('/portal/team');
    expect(team.text).not.toContain('alert(1)');

    const page = await loggedIn(browser, svc.url, owner);
    // A refused password says which rule it broke.
    await page.goto(`${svc.url}/portal/profile`);
    const change = async (next: string) => {
      await page.getByLabel('Current password').fill(PASSWORD);
      await page.getByLabel(/^New password/).fill(next);
      await page.getByLabel('Repeat the new password').fill(next);
      await page.getByRole('button', { name: 'Change password' }).click();
      return text(page.getByRole('alert'));
    };
    expect(await change('password1234')).toContain('is one of the most commonly breached passwords');
    expect(await change('my-owner-passphrase-77')).toContain('contains the name part of your email address');

    // The sender page in words.
    const digits = '16505553712';
    await inbound(digits, 'Hello there');
    await page.goto(`${svc.url}/portal/inbox/sender?phone=%2B${digits}&chatAccountId=${t.accountIds[0]!}`);
    const fields = await text(page.locator('main dl.fields'));
    expect(fields).toMatch(/Has written to this account\s+yes/);
    expect(fields).toMatch(/Reply window \(free text allowed\)\s+open until \d{4}-/);
    expect(fields).toMatch(/Opted out \(suppression list\)\s+no/);
    expect(fields).not.toMatch(/hasWritten|replyWindowExpiresAt|phoneE164|\bnull\b/);
    await checkPage(page, '37-12-sender');

    // The overview: "sent" is the messages with no receipt yet; the plan says how long messages are kept.
    await page.goto(`${svc.url}/portal`);
    expect(await text(page.locator('table.account-figures thead'))).toContain('Sent, no receipt yet');
    expect(await text(page.locator('#plan-h + p'))).toContain(
      'messages kept up to 30 days: each message for its lifetime, 7 days unless its send asks for longer',
    );
    const id = await send('defect-12', `+${digits}`, { type: 'text', text: 'kept' });
    await page.goto(`${svc.url}/portal/messages/${id}`);
    expect(await text(page.locator('dl.fields').first())).toMatch(
      /Kept until\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(its lifetime: 7 days unless the send asked otherwise, at most 30 on your plan\)/,
    );
    await page.context().close();
  });
});
