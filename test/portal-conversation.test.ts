// Issue #24, "Around it", in chromium: one number's conversation on an account, its inbound
// messages of several kinds (posted by the emulator through the real, signed provider webhook) in
// time order with our messages; the reply box sending text inside the 24-hour window (once, even
// on reload or a repeated form) and offering the approved templates outside it; the content of
// each kind in the inbox, on the inbound message's page and our message's page (reactions);
// another customer's conversation not found; a viewer sees no reply box (decision 0039).
import crypto from 'node:crypto';

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const P1 = '16505551234';
const P2 = '16505551235';
const nowS = () => Math.floor(Date.now() / 1000);
const path = (accountId: string, digits: string) => `/portal/conversations/${accountId}/%2B${digits}`;

describe('portal: the conversation view and its reply box', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let svc: Service;
  let emu: Emulator;
  let browser: Browser;
  let t: OfficialCustomer;
  let other: OfficialCustomer;
  let ours: { messageId: string; providerMessageId: string };
  const owner = 'owner@convo.example';
  const viewer = 'viewer@convo.example';
  const stranger = 'owner@other-convo.example';

  /** An inbound message from `from`, at `timestamp`, through the emulator's signed webhook. */
  async function inbound(from: string, message: Record<string, unknown>, timestamp: number, contextId?: string) {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from,
        name: 'Sheena Nelson',
        timestamp,
        message,
        contextId,
      }),
    });
    expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
  }
  const sentTo = (digits: string) => emu.sent().filter((s) => s.to === digits);

  beforeAll(async () => {
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    ({ svc, emu } = live);
    await resetEmulator(emu, { statuses: ['sent'] });
    t = await officialCustomer(svc.url, emu, { plan: 'pro' });
    other = await officialCustomer(svc.url, emu, { plan: 'pro' });
    await emu.seedTemplates(t.wabaIds[0]!, [
      { name: 'order_shipped', components: [{ type: 'BODY', text: 'Hello {{1}}, order {{2}} has shipped.' }] },
      { name: 'draft_pending', status: 'PENDING' },
      {
        name: 'order_update',
        components: [
          { type: 'HEADER', format: 'TEXT', text: 'Order news' },
          { type: 'BODY', text: 'Hi {{1}}, your order {{2}} is now {{3}}.' },
          { type: 'FOOTER', text: 'Reply STOP to opt out' },
        ],
      },
    ]);
    await createPortalUser(svc.url, t.customerId, owner);
    await createPortalUser(svc.url, t.customerId, viewer, 'viewer');
    await createPortalUser(svc.url, other.customerId, stranger);

    // P1: a text and a photo, our answer, then a list reply to it, a reaction to it and a location.
    const base = nowS() - 900;
    await inbound(P1, { type: 'text', text: { body: 'Hi, my parcel arrived broken' } }, base);
    await inbound(
      P1,
      { type: 'image', image: { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'x', caption: 'the box' } },
      base + 60,
    );
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: 'convo-ours',
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: `+${P1}` },
        content: { type: 'text', text: 'Sorry to hear that. Refund or replacement?' },
      },
    });
    expect(res.status).toBe(201);
    ours = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: t.key })).body;
      return (
        m.status === 'sent' && { messageId: m.messageId as string, providerMessageId: m.providerMessageId as string }
      );
    });
    const after = nowS() + 2;
    await inbound(
      P1,
      { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'replace', title: 'Replacement' } } },
      after,
      ours.providerMessageId,
    );
    await inbound(P1, { type: 'reaction', reaction: { message_id: ours.providerMessageId, emoji: '👍' } }, after + 1);
    await inbound(
      P1,
      { type: 'location', location: { latitude: 37.44216, longitude: -122.16153, name: 'Philz <Coffee>' } },
      after + 2,
    );
    // P2 wrote 25 hours ago: its reply window is closed.
    await inbound(P2, { type: 'text', text: { body: 'Is the shop open on Sunday?' } }, nowS() - 25 * 3600);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('shows the inbound messages of each kind in time order with ours, linked from the inbox and our message', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}/portal/inbox`);
    const row = page.locator('tbody tr', { hasText: 'Replacement' });
    expect(await text(row)).toContain('chose from a list');
    await page.locator('tbody tr', { hasText: 'Philz' }).getByRole('link', { name: 'Conversation' }).click();
    expect(new URL(page.url()).pathname).toBe(path(t.accountIds[0]!, P1).replace('%2B', '%2B'));
    const items = page.locator('ol.conversation > li');
    await items.first().waitFor();
    const rows = await items.evaluateAll((els) => els.map((e) => [e.className, (e as HTMLElement).innerText]));
    expect(rows.map((r) => r[0])).toEqual(['in', 'in', 'out', 'in', 'in', 'in']);
    const texts = rows.map((r) => r[1]!);
    expect(texts[0]).toContain('Hi, my parcel arrived broken');
    expect(texts[1]).toMatch(/image.*image\/jpeg.*the box/s);
    expect(texts[2]).toContain('Sorry to hear that.');
    expect(texts[3]).toContain('chose from a list “Replacement”');
    expect(texts[3]).toContain('in reply to our message convo-ours');
    expect(texts[4]).toContain('reacted 👍 to our message convo-ours');
    expect(texts[5]).toContain('37.44216, -122.16153');
    expect(texts[5]).toContain('Philz <Coffee>');
    const map = items.nth(5).getByRole('link', { name: 'map' });
    expect(await map.getAttribute('href')).toBe(
      'https://www.openstreetmap.org/?mlat=37.44216&mlon=-122.16153#map=16/37.44216/-122.16153',
    );
    expect(
      await items
        .nth(3)
        .getByRole('link', { name: /our message/ })
        .getAttribute('href'),
    ).toBe(`/portal/messages/${ours.messageId}`);
    expect(await text(page.locator('#reply-window'))).toContain('open until');
    await checkPage(page, '70-conversation');

    // The inbound message's own page, and our message's page with the reaction it received.
    await items.nth(5).getByRole('link').first().click();
    expect(await text(page.locator('dl.fields'))).toContain('Philz <Coffee>');
    await page.getByRole('link', { name: 'The whole conversation' }).click();
    await items.first().waitFor();
    await page.goto(`${svc.url}/portal/messages/${ours.messageId}`);
    expect(await text(page.locator('ul.reactions'))).toContain(`👍 from +${P1}`);
    await page.getByRole('link', { name: 'The conversation with this number' }).click();
    expect(await items.count()).toBe(6);
  });

  it('sends a text reply inside the window once: a reload or the same form again sends nothing more', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}${path(t.accountIds[0]!, P1)}`);
    expect(await page.locator('#reply-template').count()).toBe(0);
    await page.getByLabel('Reply', { exact: true }).fill('A replacement is on its way.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    expect(await text(page.getByRole('status'))).toContain('Sent: your reply is on its way.');
    expect(new URL(page.url()).pathname).toBe(path(t.accountIds[0]!, P1));
    const mine = () => sentTo(P1).filter((s) => JSON.stringify(s.payload).includes('A replacement is on its way.'));
    await eventually(async () => mine().length === 1);
    expect(mine()[0]!.payload).toMatchObject({ type: 'text', text: { body: 'A replacement is on its way.' } });
    const reload = await page.reload();
    expect(reload!.request().method()).toBe('GET');
    expect(await text(page.locator('ol.conversation > li.out').last())).toContain('A replacement is on its way.');
    const listed = await call(svc.url, 'GET', `/messages?chatAccountId=${t.accountIds[0]}&limit=100`, { key: t.key });
    expect((listed.body.messages as { recipient: string }[]).filter((m) => m.recipient === `+${P1}`).length).toBe(2);

    // The same form posted twice (a browser resubmitting it) is one message: its externalId is the form's.
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const form = await client.get(path(t.accountIds[0]!, P1));
    const externalId = /name="externalId" value="([^"]+)"/.exec(form.text)![1]!;
    const fields = { _csrf: client.formToken(form.text), kind: 'text', externalId, text: 'Twice?' };
    expect((await client.post(`${path(t.accountIds[0]!, P1)}/reply`, fields)).status).toBe(303);
    expect((await client.post(`${path(t.accountIds[0]!, P1)}/reply`, fields)).status).toBe(303);
    const twice = await call(svc.url, 'GET', `/messages/${externalId}`, { key: t.key });
    expect(twice.status).toBe(200);
    await eventually(async () => sentTo(P1).filter((s) => JSON.stringify(s.payload).includes('Twice?')).length === 1);
    expect(
      (
        (await call(svc.url, 'GET', `/messages?limit=100`, { key: t.key })).body.messages as { recipient: string }[]
      ).filter((m) => m.recipient === `+${P1}`).length,
    ).toBe(3);

    // A refused reply: the problem in words beside the field, the text kept.
    const long = 'x'.repeat(10_001);
    const refused = await client.post(`${path(t.accountIds[0]!, P1)}/reply`, {
      ...fields,
      externalId: 'convo-long',
      text: long,
    });
    expect(refused.status).toBe(400);
    const problem = /id="reply-text-error"[\s\S]*?<\/div>/.exec(refused.text)?.[0] ?? '';
    // The portal's bound is the provider's 4,096 characters (issue #37), below the API's 10,000.
    expect(problem).toMatch(/<strong>Reply<\/strong>: is 10,001 characters long; the provider delivers at most 4,096/);
    expect(refused.text).toContain(`>${long}</textarea>`);
    expect(refused.text).not.toContain('validation_error');
  });

  it('outside the window offers the approved templates instead of the text box, and sends one', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}${path(t.accountIds[0]!, P2)}`);
    expect(await text(page.locator('#reply-window'))).toContain('The reply window closed');
    expect(await page.locator('#reply-text').count()).toBe(0);
    const options = await page.locator('#reply-template option').allInnerTexts();
    expect(options.map((o) => o.trim())).toEqual(
      expect.arrayContaining([
        expect.stringContaining('order_shipped (en_US, utility), 2 variables'),
        expect.stringContaining('promo'),
      ]),
    );
    expect(options.join(' ')).not.toContain('draft_pending');
    await checkPage(page, '71-conversation-templates');
    await page.getByLabel('Template', { exact: true }).selectOption('order_shipped:en_US');
    await page.getByLabel('Template variables, one per line, in order').fill('Ana\nA-1001');
    await page.getByRole('button', { name: 'Send template' }).click();
    expect(await text(page.getByRole('status'))).toContain('Sent: the template is on its way.');
    const sent = await eventually(async () => sentTo(P2).find((s) => s.type === 'template'));
    expect(sent.payload).toMatchObject({
      type: 'template',
      template: { name: 'order_shipped', language: { code: 'en_US' } },
    });
    expect(JSON.stringify(sent.payload)).toContain('A-1001');
    expect(await text(page.locator('ol.conversation > li.out').last())).toContain('template order_shipped');

    // A text posted anyway (the window closed after the page was shown) is refused in words, not sent.
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const form = await client.get(path(t.accountIds[0]!, P2));
    const refused = await client.post(`${path(t.accountIds[0]!, P2)}/reply`, {
      _csrf: client.formToken(form.text),
      kind: 'text',
      externalId: 'convo-closed',
      text: 'Yes, 10 to 4.',
    });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('The 24-hour reply window is closed');
    expect(refused.text).toContain('id="reply-template"');
    expect((await call(svc.url, 'GET', '/messages/convo-closed', { key: t.key })).status).toBe(404);
  });

  it('checks a template reply against the catalog and previews it filled (issue #37 defect 2)', async () => {
    const page = await loggedIn(browser, svc.url, owner);
    await page.goto(`${svc.url}${path(t.accountIds[0]!, P2)}`);
    const select = page.getByLabel('Template', { exact: true });
    await select.selectOption('order_update:en_US');
    expect(await page.locator('#reply-template option:checked').textContent()).toContain('3 variables');
    const variables = page.getByLabel('Template variables, one per line, in order');
    // The preview follows the form as it is typed (portal.js): variables not given yet stay {{n}}.
    await variables.fill('Ana');
    await eventually(async () =>
      (await text(page.locator('#reply-preview'))).includes('Hi Ana, your order {{2}} is now {{3}}.'),
    );
    expect(await text(page.locator('#reply-preview'))).toContain('Order news');
    expect(await text(page.locator('#reply-preview'))).toContain('Reply STOP to opt out');

    // One line for three variables: refused in words beside the field, nothing reaches the provider.
    const before = sentTo(P2).length;
    await page.getByRole('button', { name: 'Send template' }).click();
    const problem = await text(page.locator('#reply-template-error'));
    expect(problem).toContain('Template variables');
    expect(problem).toContain("has 1 value; the template's body has 3 variables");
    expect(await page.locator('#reply-variables').inputValue()).toBe('Ana');
    expect(await page.locator('#reply-template option:checked').getAttribute('value')).toBe('order_update:en_US');

    // The Preview button (the form without portal.js) shows the filled template and sends nothing.
    await variables.fill('Ana\nA-1002\nout for delivery');
    await page.getByRole('button', { name: 'Preview' }).click();
    expect(await text(page.locator('#reply-preview'))).toContain('Hi Ana, your order A-1002 is now out for delivery.');
    await checkPage(page, '72-conversation-template-preview');

    await page.getByRole('button', { name: 'Send template' }).click();
    expect(await text(page.getByRole('status'))).toContain('Sent: the template is on its way.');
    const sent = await eventually(async () =>
      sentTo(P2).find((s) => JSON.stringify(s.payload).includes('order_update')),
    );
    expect(sent.payload).toMatchObject({
      template: {
        name: 'order_update',
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ana' },
              { type: 'text', text: 'A-1002' },
              { type: 'text', text: 'out for delivery' },
            ],
          },
        ],
      },
    });
    // Only that one: the refused reply and the preview sent nothing.
    expect(sentTo(P2).length).toBe(before + 1);
  });

  it('shows a voice note, a document and contact cards by their content, escaped', async () => {
    const P4 = '16505551237';
    const base = nowS() - 300;
    await inbound(P4, { type: 'audio', audio: { id: '1003383421387256', mime_type: 'audio/ogg', voice: true } }, base);
    await inbound(
      P4,
      {
        type: 'document',
        document: { id: '1003', mime_type: 'application/pdf', filename: 'invoice<1>.pdf', caption: 'April' },
      },
      base + 1,
    );
    await inbound(
      P4,
      {
        type: 'contacts',
        contacts: [
          { name: { formatted_name: 'Barbara J. Johnson' }, phones: [{ phone: '+1 (650) 555-1234', type: 'WORK' }] },
          { name: { first_name: 'Ann', last_name: '<b>Lee</b>' }, phones: [] },
        ],
      },
      base + 2,
    );
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const page = await client.get(path(t.accountIds[0]!, P4));
    const bodies = [...page.text.matchAll(/<p class="body">([\s\S]*?)<\/p>/g)].map((m) =>
      m[1]!
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    );
    // The provider never had these files (unknown ids): their state is said in words, nothing is played.
    expect(bodies).toHaveLength(3);
    expect(bodies[0]).toMatch(
      /^voice note \(audio\/ogg\) \(file (being fetched from the provider|could not be fetched)\)$/,
    );
    expect(bodies[1]).toMatch(/^document invoice&lt;1&gt;\.pdf \(application\/pdf\): April \(file /);
    expect(bodies[2]).toBe('2 contacts Barbara J. Johnson (+1 (650) 555-1234); Ann &lt;b&gt;Lee&lt;/b&gt;');
    expect(page.text).not.toContain('<audio');
    const inbox = await client.get(`/portal/inbox?from=%2B${P4}`);
    expect(inbox.text).toContain('<strong>voice note</strong>');
    expect(inbox.text).not.toContain('<b>Lee</b>');
  });

  it('plays a voice note and shows a photo fetched through the real webhook; another customer gets 404', async () => {
    const P5 = '16505551238';
    const ogg = crypto.randomBytes(2048);
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    const pdf = Buffer.from('%PDF-1.4\n%fake\n');
    for (const [type, media] of [
      ['audio', { dataBase64: ogg.toString('base64'), voice: true }],
      ['image', { dataBase64: png.toString('base64'), mimeType: 'image/png', caption: 'the broken box' }],
      ['document', { dataBase64: pdf.toString('base64'), filename: 'receipt "1".pdf' }],
    ] as const) {
      const res = await fetch(`${emu.url}/__emulator/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], from: P5, type, media }),
      });
      expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
    }
    const ids = await eventually(async () => {
      const list = (await call(svc.url, 'GET', `/inbound-messages?from=%2B${P5}`, { key: t.key })).body
        .inboundMessages as { inboundMessageId: string; messageType: string; media: { state: string } }[];
      return list.length === 3 && list.every((m) => m.media.state === 'fetched') && list;
    });
    const idOf = (type: string) =>
      ids.find((m) => m.messageType === (type === 'audio' ? 'voice_note' : type))!.inboundMessageId;

    const page = await loggedIn(browser, svc.url, viewer);
    const loaded: { url: string; status: number; type: string | null }[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/media'))
        loaded.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] ?? null });
    });
    const csp: string[] = [];
    page.on('console', (m) => m.text().includes('Content Security Policy') && csp.push(m.text()));
    await page.goto(`${svc.url}${path(t.accountIds[0]!, P5)}`);
    const audio = page.locator('ol.conversation audio[controls]');
    expect(await audio.getAttribute('src')).toBe(`/portal/inbox/${idOf('audio')}/media`);
    const img = page.locator('ol.conversation img.thumb');
    expect(await img.getAttribute('alt')).toBe('the broken box');
    expect(await img.getAttribute('src')).toBe(`/portal/inbox/${idOf('image')}/media`);
    // The thumbnail is decoded by the browser (it loaded, under the portal's CSP).
    await eventually(async () => (await img.evaluate((e) => (e as HTMLImageElement).naturalWidth)) > 0);
    // The player loads the voice note's data (the browser asks for it with preload="metadata").
    await audio.evaluate((e) => (e as HTMLAudioElement).load());
    await eventually(async () => loaded.some((l) => l.url.endsWith(`${idOf('audio')}/media`)));
    expect(loaded.find((l) => l.url.endsWith(`${idOf('image')}/media`))).toMatchObject({
      status: 200,
      type: 'image/png',
    });
    expect(loaded.find((l) => l.url.endsWith(`${idOf('audio')}/media`))).toMatchObject({
      status: 200,
      type: 'audio/ogg; codecs=opus',
    });
    const download = page.getByRole('link', { name: 'Download receipt "1".pdf' });
    expect(await download.getAttribute('href')).toBe(`/portal/inbox/${idOf('document')}/media`);
    expect(csp).toEqual([]);
    await checkPage(page, '73-conversation-files');

    // The files as the portal serves them: type, size, inline only for what a browser plays safely.
    const viewerClient = new PortalClient(svc.url);
    await viewerClient.login(viewer);
    const voice = await viewerClient.get(`/portal/inbox/${idOf('audio')}/media`);
    expect(voice.status).toBe(200);
    expect(voice.headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    expect(voice.headers.get('content-length')).toBe('2048');
    expect(voice.headers.get('content-disposition')).toBe('inline');
    expect(voice.headers.get('x-content-type-options')).toBe('nosniff');
    expect(voice.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    const image = await viewerClient.get(`/portal/inbox/${idOf('image')}/media`);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('content-length')).toBe(String(png.length));
    const doc = await viewerClient.get(`/portal/inbox/${idOf('document')}/media`);
    expect(doc.headers.get('content-type')).toBe('application/pdf');
    expect(doc.headers.get('content-disposition')).toBe(
      `attachment; filename="receipt _1_.pdf"; filename*=UTF-8''${encodeURIComponent('receipt "1".pdf')}`,
    );
    expect(doc.text).toBe(pdf.toString());
    // The portal's pages themselves allow media from the portal only.
    const convo = await viewerClient.get(path(t.accountIds[0]!, P5));
    expect(convo.headers.get('content-security-policy')).toContain("media-src 'self'");

    // Another customer's user: not found, as an unknown id; no session: not served.
    const strangerClient = new PortalClient(svc.url);
    await strangerClient.login(stranger);
    for (const type of ['audio', 'image', 'document']) {
      const res = await strangerClient.get(`/portal/inbox/${idOf(type)}/media`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('text/html');
    }
    const anonymous = await fetch(`${svc.url}/portal/inbox/${idOf('image')}/media`, { redirect: 'manual' });
    expect(anonymous.status).not.toBe(200);
    expect(anonymous.headers.get('content-type') ?? '').not.toContain('image/png');
  });

  it('pages newest first: 30 items a page, inbound and outbound merged across the page boundary', async () => {
    const P3 = '16505551236';
    const base = nowS() - 5000;
    for (let i = 0; i < 31; i++) await inbound(P3, { type: 'text', text: { body: `question ${i}` } }, base + i * 10);
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: 'convo-pages',
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: `+${P3}` },
        content: { type: 'text', text: 'the newest, ours' },
      },
    });
    expect(res.status).toBe(201);
    const client = new PortalClient(svc.url);
    await client.login(owner);
    const bodies = (html: string) => [...html.matchAll(/<p class="body">\s*([^<]*?)\s*<\/p>/g)].map((m) => m[1]);
    const first = await client.get(path(t.accountIds[0]!, P3));
    expect(first.status).toBe(200);
    const onFirst = bodies(first.text);
    expect(onFirst).toHaveLength(30);
    expect(onFirst[0]).toBe('question 2');
    expect(onFirst.at(-1)).toBe('the newest, ours');
    const next = /<a rel="next" href="([^"]+)">Earlier messages<\/a>/.exec(first.text)![1]!.replaceAll('&amp;', '&');
    const second = await client.get(next);
    expect(bodies(second.text)).toEqual(['question 0', 'question 1']);
    expect(second.text).not.toContain('Earlier messages');
    expect(second.text).toContain('Newest messages');
  });

  it("another customer's conversation and inbound message are not found; a viewer sees no reply box", async () => {
    const strangerClient = new PortalClient(svc.url);
    await strangerClient.login(stranger);
    expect((await strangerClient.get(path(t.accountIds[0]!, P1))).status).toBe(404);
    expect((await strangerClient.get(path(other.accountIds[0]!, P1))).status).toBe(200);
    expect((await strangerClient.get(`/portal/conversations/not-a-uuid/%2B${P1}`)).status).toBe(404);
    expect((await strangerClient.get(`/portal/conversations/${other.accountIds[0]}/not-a-number`)).status).toBe(404);
    const inboxItem = (await call(svc.url, 'GET', `/inbound-messages?from=%2B${P1}&limit=1`, { key: t.key })).body
      .inboundMessages[0].inboundMessageId as string;
    expect((await strangerClient.get(`/portal/inbox/${inboxItem}`)).status).toBe(404);
    const form = await strangerClient.get(path(other.accountIds[0]!, P1));
    const post = await strangerClient.post(`${path(t.accountIds[0]!, P1)}/reply`, {
      _csrf: strangerClient.formToken(form.text),
      kind: 'text',
      externalId: 'convo-stranger',
      text: 'not yours',
    });
    expect(post.status).toBe(404);

    const page = await loggedIn(browser, svc.url, viewer);
    await page.goto(`${svc.url}${path(t.accountIds[0]!, P1)}`);
    expect(await page.locator('ol.conversation > li').count()).toBeGreaterThanOrEqual(6);
    expect(await text(page.locator('section', { hasText: 'Reply to this number' }))).toContain('Your role is viewer');
    expect(await page.locator('#reply-form').count()).toBe(0);
    await checkPage(page, '72-conversation-viewer');
    const viewerClient = new PortalClient(svc.url);
    await viewerClient.login(viewer);
    const vForm = await viewerClient.get(path(t.accountIds[0]!, P1));
    const vPost = await viewerClient.post(`${path(t.accountIds[0]!, P1)}/reply`, {
      _csrf: viewerClient.formToken(vForm.text),
      kind: 'text',
      externalId: 'convo-viewer',
      text: 'viewer',
    });
    expect(vPost.status).toBe(403);
    expect((await call(svc.url, 'GET', '/messages/convo-viewer', { key: t.key })).status).toBe(404);
  });
});
