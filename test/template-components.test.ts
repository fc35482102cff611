// Templates with components (issue #35.5, decision 0068), through the real service and the
// emulator over HTTP: a media header (by link and by upload), buttons (quick reply, a URL with a
// variable, copy code, a phone number), an authentication template's one-time password and a
// carousel are sent with their parameters in the provider's wire shape; a send that does not fit
// its template in the catalog is refused at accept (400 naming the path) and never reaches the
// provider; one the catalog could not check is refused by the provider (132000, 132012).
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { type FileServer, startFileServer } from './support/file-server.js';
import { call, createKey, eventually, type Service } from './support/harness.js';
import { JPEG_BYTES, PDF_BYTES, upload } from './support/media-files.js';
import { MANAGEMENT_TOKEN, type OfficialCustomer, officialCustomer } from './support/official-customer.js';

const ext = () => `tc-${crypto.randomBytes(6).toString('hex')}`;
const LINK = 'https://cdn.example.com/p/shoe.jpg';

const CATALOG = [
  {
    name: 'shipping_update',
    components: [
      { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2U='] } },
      { type: 'BODY', text: 'Hi {{1}}, order {{2}} ships today.' },
      { type: 'FOOTER', text: 'Shop Inc.' },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Stop updates' },
          { type: 'URL', text: 'Track', url: 'https://shop.example.com/track/{{1}}', example: ['A-1'] },
          { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550100000' },
        ],
      },
    ],
  },
  {
    name: 'coupon_offer',
    category: 'MARKETING',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'A gift for {{1}}', example: { header_text: ['Ana'] } },
      { type: 'BODY', text: 'Use the code below at checkout.' },
      { type: 'BUTTONS', buttons: [{ type: 'COPY_CODE', example: 'SAVE10' }] },
    ],
  },
  {
    name: 'login_code',
    category: 'AUTHENTICATION',
    components: [
      { type: 'BODY', text: '*{{1}}* is your verification code.' },
      { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
    ],
  },
  {
    name: 'spring_picks',
    category: 'MARKETING',
    components: [
      { type: 'BODY', text: 'Our picks for {{1}}' },
      {
        type: 'CAROUSEL',
        cards: [0, 1].map(() => ({
          components: [
            { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1hZ2U='] } },
            { type: 'BODY', text: 'Only {{1}} today' },
            { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'More like this' }] },
          ],
        })),
      },
    ],
  },
  {
    name: 'invoice_ready',
    components: [
      { type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::cGRm'] } },
      { type: 'BODY', text: 'Invoice {{1}} is attached.' },
    ],
  },
];

describe('templates with components', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let svc: Service;
  let emu: Emulator;
  let t: OfficialCustomer;
  let files: FileServer;
  let photo: string;

  beforeAll(async () => {
    // The header's file by URL is fetched by the worker (as every file): from a local server here.
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' });
    files = await startFileServer();
    files.put('/shoe.jpg', { body: JPEG_BYTES, headers: { 'content-type': 'image/jpeg' } });
    photo = `${files.url}/shoe.jpg`;
    ({ svc, emu } = live);
    await resetEmulator(emu);
    t = await officialCustomer(svc.url, emu, { plan: 'pro' });
    await emu.seedTemplates(t.wabaIds[0]!, CATALOG);
  });
  afterAll(async () => {
    await live?.stop();
    await files?.close();
  });

  const send = (to: string, template: Record<string, unknown>, externalId = ext()) =>
    call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: to },
        content: { type: 'template', template: { language: 'en_US', ...template } },
      },
    });
  const settled = (id: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      return m.status !== 'pending' && m.status !== 'queued' && m;
    });
  const componentsSent = async (id: string) => {
    const s = await eventually(async () => emu.sent().find((x) => x.messageId === id));
    return (s.payload.template as { components?: unknown }).components;
  };

  it("sends media headers, buttons, a one-time password and a carousel in the provider's wire shape", async () => {
    const shipping = await send('+15556100001', {
      name: 'shipping_update',
      components: {
        headerMedia: { type: 'image', url: photo },
        body: ['Ana', 'A-1001'],
        buttons: [
          { index: 0, subType: 'quick_reply', value: 'stop-A-1001' },
          { index: 1, subType: 'url', value: 'A-1001' },
        ],
      },
    });
    expect(shipping.status).toBe(201);
    // The worker fetched the file and uploaded it to the number: the header names the provider's id.
    const shippingSent = (await componentsSent(shipping.body.messageId)) as { parameters: any[] }[];
    const imageId = shippingSent[0]!.parameters[0].image.id as string;
    expect(emu.state.media.get(imageId)?.mimeType).toBe('image/jpeg');
    expect(files.hitsOf('/shoe.jpg')).toBe(1);
    expect(shippingSent).toEqual([
      { type: 'header', parameters: [{ type: 'image', image: { id: imageId } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ana' },
          { type: 'text', text: 'A-1001' },
        ],
      },
      {
        type: 'button',
        sub_type: 'quick_reply',
        index: '0',
        parameters: [{ type: 'payload', payload: 'stop-A-1001' }],
      },
      { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'A-1001' }] },
    ]);

    const coupon = await send('+15556100002', {
      name: 'coupon_offer',
      components: { header: ['Ana'], buttons: [{ index: 0, subType: 'copy_code', value: 'SAVE10' }] },
    });
    expect(coupon.status).toBe(201);
    expect(await componentsSent(coupon.body.messageId)).toEqual([
      { type: 'header', parameters: [{ type: 'text', text: 'Ana' }] },
      {
        type: 'button',
        sub_type: 'copy_code',
        index: '0',
        parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }],
      },
    ]);

    // The provider's form of a one-time password: the code in the body and in the url button.
    const otp = await send('+15556100003', {
      name: 'login_code',
      components: { body: ['482913'], buttons: [{ index: 0, subType: 'url', value: '482913' }] },
    });
    expect(otp.status).toBe(201);
    expect(await componentsSent(otp.body.messageId)).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '482913' }] },
    ]);

    const card = (i: number) => ({
      headerMedia: { type: 'image', url: `https://cdn.example.com/p/${i}.jpg` },
      body: [`$${i}9`],
      buttons: [{ index: 0, subType: 'quick_reply', value: `more-${i}` }],
    });
    const carousel = await send('+15556100004', {
      name: 'spring_picks',
      components: { body: ['Ana'], cards: [card(0), card(1)] },
    });
    expect(carousel.status).toBe(201);
    expect(await componentsSent(carousel.body.messageId)).toEqual([
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
      {
        type: 'carousel',
        cards: [0, 1].map((i) => ({
          card_index: i,
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: `https://cdn.example.com/p/${i}.jpg` } }] },
            { type: 'body', parameters: [{ type: 'text', text: `$${i}9` }] },
            {
              type: 'button',
              sub_type: 'quick_reply',
              index: '0',
              parameters: [{ type: 'payload', payload: `more-${i}` }],
            },
          ],
        })),
      },
    ]);

    // A document header by upload: the worker uploads it, the header names the provider's media id.
    const pdf = await upload(svc.url, t.key, PDF_BYTES, 'invoice-7.pdf', 'application/pdf');
    expect(pdf.status).toBe(201);
    const invoice = await send('+15556100005', {
      name: 'invoice_ready',
      components: { headerMedia: { type: 'document', mediaId: pdf.body.mediaId }, body: ['7'] },
    });
    expect(invoice.status).toBe(201);
    const [header] = (await componentsSent(invoice.body.messageId)) as { parameters: { document: any }[] }[];
    expect(header!.parameters[0]!.document).toEqual({ id: expect.any(String), filename: 'invoice-7.pdf' });
    expect(emu.state.media.has(header!.parameters[0]!.document.id)).toBe(true);

    for (const m of [shipping, coupon, otp, carousel, invoice])
      expect(['sent', 'delivered']).toContain((await settled(m.body.messageId)).status);
  });

  it('refuses at accept a send that does not fit its template, naming each path; nothing reaches the provider', async () => {
    const to = '+15556100010';
    const cases: [Record<string, unknown>, { path: string; message: RegExp }[]][] = [
      [
        { name: 'shipping_update', components: { body: ['Ana'] } },
        [
          { path: 'content.template.components.headerMedia', message: /is required: the template's header is image/ },
          { path: 'content.template.components.body', message: /has 1 value; the template's body has 2 variables/ },
          {
            path: 'content.template.components.buttons',
            message: /must give a value for button 1 \(URL with a variable/,
          },
        ],
      ],
      [
        {
          name: 'shipping_update',
          components: {
            headerMedia: { type: 'video', url: LINK },
            body: ['Ana', 'A-1'],
            buttons: [
              { index: 1, subType: 'url', value: 'A-1' },
              { index: 0, subType: 'url', value: 'x' },
              { index: 2, subType: 'quick_reply', value: 'x' },
              { index: 5, subType: 'quick_reply', value: 'x' },
            ],
          },
        },
        [
          { path: 'content.template.components.headerMedia.type', message: /must be image/ },
          { path: 'content.template.components.buttons.1.subType', message: /must be quick_reply: button 0/ },
          {
            path: 'content.template.components.buttons.2',
            message: /is not allowed: button 2 \(phone number\) takes no value/,
          },
          { path: 'content.template.components.buttons.3.index', message: /has no button in the template \(it has 3/ },
        ],
      ],
      [
        { name: 'coupon_offer', components: { header: ['Ana', 'Bo'], body: ['x'] } },
        [
          { path: 'content.template.components.header', message: /has 2 values; the template's header has 1 variable/ },
          { path: 'content.template.components.body', message: /is not allowed: the template's body has no variables/ },
          { path: 'content.template.components.buttons', message: /button 0 \(copy code, subType copy_code\)/ },
        ],
      ],
      [
        { name: 'spring_picks', components: { body: ['Ana'], cards: [{ headerMedia: { type: 'image', url: LINK } }] } },
        [{ path: 'content.template.components.cards', message: /has 1 card; the carousel has 2 cards/ }],
      ],
      [
        { name: 'login_code', components: { body: ['1'], cards: [{ headerMedia: { type: 'image', url: LINK } }] } },
        [
          { path: 'content.template.components.buttons', message: /one-time password, subType url/ },
          { path: 'content.template.components.cards', message: /not a carousel/ },
        ],
      ],
      [{ name: 'no_such_template' }, [{ path: 'content.template.name', message: /names no template/ }]],
    ];
    for (const [template, expected] of cases) {
      const res = await send(to, template);
      expect(res.status, JSON.stringify(template)).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(res.body.details).toEqual(
        expected.map((e) => ({ path: e.path, message: expect.stringMatching(e.message) })),
      );
    }
    // A card's file goes by url, and a header is text or a file: the request's own rules.
    const mixed = await send(to, {
      name: 'spring_picks',
      components: {
        header: ['x'],
        headerMedia: { type: 'image', url: LINK },
        cards: [{ headerMedia: { type: 'image', mediaId: crypto.randomUUID() } }],
      },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.details.map((d: { path: string }) => d.path)).toEqual([
      'content.template.components.header',
      'content.template.components.cards.0.headerMedia.url',
    ]);
    // A send that fits goes; none of the refused ones reached the provider.
    const ok = await send(to, {
      name: 'login_code',
      components: { body: ['1'], buttons: [{ index: 0, subType: 'url', value: '1' }] },
    });
    expect(ok.status).toBe(201);
    await eventually(async () => emu.sent().some((s) => s.messageId === ok.body.messageId));
    expect(emu.sent().filter((s) => s.to === to.slice(1))).toHaveLength(1);
    expect(emu.state.refused.filter((r) => r.to === to.slice(1))).toHaveLength(0);
  });

  it("checks a broadcast's shared and per-recipient template values", async () => {
    const content = {
      type: 'template',
      template: { name: 'login_code', language: 'en_US', components: { body: ['1'] } },
    };
    const res = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: ext(),
        chatAccountId: t.accountIds[0],
        content,
        recipients: [
          { phoneE164: '+15556100020' },
          {
            phoneE164: '+15556100021',
            components: { body: ['1', '2'], buttons: [{ index: 0, subType: 'url', value: '1' }] },
          },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      {
        path: 'content.template.components.buttons',
        message: expect.stringContaining('must give a value for button 0'),
      },
      {
        path: 'recipients.1.components.body',
        message: expect.stringContaining("has 2 values; the template's body has 1 variable"),
      },
    ]);
    // Every recipient with values of its own: the shared ones are not used, so not checked.
    const own = (code: string) => ({ body: [code], buttons: [{ index: 0, subType: 'url', value: code }] });
    const ok = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: ext(),
        chatAccountId: t.accountIds[0],
        content,
        recipients: [
          { phoneE164: '+15556100022', components: own('11') },
          { phoneE164: '+15556100023', components: own('22') },
        ],
      },
    });
    expect(ok.status).toBe(201);
    await eventually(async () => emu.sent().filter((s) => ['15556100022', '15556100023'].includes(s.to)).length === 2);
  });

  it('the provider refuses what the catalog could not check: 132000 and 132012, the message failed', async () => {
    // A template this process has not read yet, while the management credential does not work:
    // the catalog cannot be read, so the send is accepted and goes to the provider.
    await emu.seedTemplates(t.wabaIds[0]!, [
      {
        name: 'renewal_notice',
        components: [
          { type: 'HEADER', format: 'DOCUMENT', example: { header_handle: ['4::cGRm'] } },
          { type: 'BODY', text: 'Contract {{1}} renews soon.' },
        ],
      },
    ]);
    await emu.waba(t.wabaIds[0]!, { managementToken: 'EAAG-rotated' });
    try {
      const res = await send('+15556100030', { name: 'renewal_notice', components: { body: ['1'] } });
      expect(res.status).toBe(201);
      const m = await settled(res.body.messageId);
      expect(m).toMatchObject({ status: 'failed', error: { code: 'TEMPLATE_PARAMETERS_INVALID' } });
      const refusal = emu.state.refused.find((r) => r.to === '15556100030');
      expect(refusal?.problem).toBe(
        'header: number of localizable_params (0) does not match the expected number of params (1)',
      );
    } finally {
      await emu.waba(t.wabaIds[0]!, { managementToken: MANAGEMENT_TOKEN });
    }
    // The emulator as the provider answers, over HTTP: a button's sub_type that is not the template's.
    const res = await fetch(`${emu.url}/v23.0/${t.phoneNumberIds[0]}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer EAAG-send' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: '15556100031',
        type: 'template',
        template: {
          name: 'coupon_offer',
          language: { code: 'en_US' },
          components: [
            { type: 'header', parameters: [{ type: 'text', text: 'Ana' }] },
            { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'x' }] },
          ],
        },
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; error_data: { details: string } } };
    expect(body.error.code).toBe(132012);
    expect(body.error.error_data.details).toContain('button at index 0: sub_type quick_reply');
    // And an image where the template's header is a document.
    const wrongHeader = await fetch(`${emu.url}/v23.0/${t.phoneNumberIds[0]}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer EAAG-send' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        to: '15556100032',
        type: 'template',
        template: {
          name: 'invoice_ready',
          language: { code: 'en_US' },
          components: [
            { type: 'header', parameters: [{ type: 'image', image: { link: LINK } }] },
            { type: 'body', parameters: [{ type: 'text', text: '1' }] },
          ],
        },
      }),
    });
    expect(((await wrongHeader.json()) as { error: { code: number } }).error.code).toBe(132012);
  });

  it('a catalog that does not answer in time does not hold the accept: the send goes out unchecked', async () => {
    await emu.seedTemplates(t.wabaIds[0]!, [
      { name: 'slow_catalog', components: [{ type: 'BODY', text: 'Hi {{1}} there' }] },
    ]);
    await emu.rule({ templateOperation: 'list', wabaId: t.wabaIds[0]!, times: 1, hang: true });
    const started = Date.now();
    const res = await send('+15556100035', { name: 'slow_catalog', components: { body: ['Ana'] } });
    expect(res.status).toBe(201);
    // Answered while the provider still held the catalog read (it would end it only after 120 s,
    // and our client gives up at the provider timeout): the accept did not wait for either.
    expect(Date.now() - started).toBeLessThan(svc.config.providerTimeoutMs);
    expect(await settled(res.body.messageId)).toMatchObject({ status: expect.stringMatching(/^(sent|delivered)$/) });
  });

  describe('created through template management', () => {
    let manage: string;
    const HANDLE = '4::aW1hZ2UvanBlZw==:ARZ';
    const create = (body: Record<string, unknown>) =>
      call(svc.url, 'POST', `/chat-accounts/${t.accountIds[0]}/templates`, {
        key: manage,
        body: { language: 'en_US', parameterFormat: 'POSITIONAL', ...body },
      });
    const stored = (name: string) => emu.state.templates.get(t.wabaIds[0]!)!.find((x) => x.name === name)!;
    beforeAll(async () => {
      manage = await createKey(svc.url, t.customerId, { templateAccess: 'manage' });
    });

    it('a media header, footer and every kind of button, in the provider components; then sent', async () => {
      const res = await create({
        name: 'delivery_slot',
        category: 'UTILITY',
        header: { format: 'VIDEO', exampleHandle: HANDLE },
        body: 'Hi {{1}}, pick a delivery slot.',
        examples: [{ name: '1', text: 'Ana' }],
        footer: 'Shop Inc.',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Tomorrow' },
          {
            type: 'URL',
            text: 'Choose',
            url: 'https://shop.example.com/slot/{{1}}',
            example: 'https://shop.example.com/slot/a1',
          },
          { type: 'PHONE_NUMBER', text: 'Call us', phoneNumber: '+15550100000' },
          { type: 'COPY_CODE', example: 'SLOT10' },
        ],
      });
      expect(res.status).toBe(201);
      const components = [
        { type: 'HEADER', format: 'VIDEO', example: { header_handle: [HANDLE] } },
        { type: 'BODY', text: 'Hi {{1}}, pick a delivery slot.', example: { body_text: [['Ana']] } },
        { type: 'FOOTER', text: 'Shop Inc.' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Tomorrow' },
            {
              type: 'URL',
              text: 'Choose',
              url: 'https://shop.example.com/slot/{{1}}',
              example: ['https://shop.example.com/slot/a1'],
            },
            { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+15550100000' },
            { type: 'COPY_CODE', example: 'SLOT10' },
          ],
        },
      ];
      expect(res.body).toMatchObject({ name: 'delivery_slot', status: 'PENDING', parameterCount: 1, components });
      expect(stored('delivery_slot').components).toEqual(components);

      // Sent with its values once approved; the check at accept knows its buttons.
      await emu.reviewTemplate(t.wabaIds[0]!, stored('delivery_slot').id, { status: 'APPROVED' });
      const refused = await send('+15556100040', {
        name: 'delivery_slot',
        components: {
          headerMedia: { type: 'video', url: photo },
          body: ['Ana'],
          buttons: [{ index: 1, subType: 'url', value: 'a1' }],
        },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toEqual([
        { path: 'content.template.components.buttons', message: expect.stringContaining('button 3 (copy code') },
      ]);
    });

    it('authentication templates: a copy-code or one-tap password, the preset text; sent with the code', async () => {
      const copy = await create({
        name: 'signin_code',
        category: 'AUTHENTICATION',
        authentication: { otpType: 'COPY_CODE', addSecurityRecommendation: true, codeExpirationMinutes: 10 },
      });
      expect(copy.status).toBe(201);
      expect(stored('signin_code').components).toEqual([
        {
          type: 'BODY',
          text: '*{{1}}* is your verification code. For your security, do not share this code.',
          add_security_recommendation: true,
        },
        { type: 'FOOTER', code_expiration_minutes: 10, text: 'This code expires in 10 minutes.' },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ]);
      const tap = await create({
        name: 'signin_tap',
        category: 'AUTHENTICATION',
        authentication: {
          otpType: 'ONE_TAP',
          buttonText: 'Copy code',
          autofillText: 'Autofill',
          packageName: 'com.example.shop',
          signatureHash: 'K8a/AINcGX7',
        },
      });
      expect(tap.status).toBe(201);
      expect(stored('signin_tap').components.at(-1)).toEqual({
        type: 'BUTTONS',
        buttons: [
          {
            type: 'OTP',
            otp_type: 'ONE_TAP',
            text: 'Copy code',
            autofill_text: 'Autofill',
            supported_apps: [{ package_name: 'com.example.shop', signature_hash: 'K8a/AINcGX7' }],
          },
        ],
      });
      const sent = await send('+15556100041', {
        name: 'signin_code',
        components: { body: ['739204'], buttons: [{ index: 0, subType: 'url', value: '739204' }] },
      });
      expect(sent.status).toBe(201);
      expect(await componentsSent(sent.body.messageId)).toEqual([
        { type: 'body', parameters: [{ type: 'text', text: '739204' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '739204' }] },
      ]);
    });

    it('a carousel of cards, created and sent', async () => {
      const card = (n: number) => ({
        header: { format: 'IMAGE', exampleHandle: HANDLE },
        body: `Pair {{1}} for you`,
        examples: [{ name: '1', text: `#${n}` }],
        buttons: [
          { type: 'QUICK_REPLY', text: 'Want it' },
          { type: 'URL', text: 'Buy', url: 'https://shop.example.com/buy' },
        ],
      });
      const res = await create({
        name: 'shoe_cards',
        category: 'MARKETING',
        body: 'New in for {{1}} this week',
        examples: [{ name: '1', text: 'Ana' }],
        cards: [card(1), card(2)],
      });
      expect(res.status).toBe(201);
      const carousel = stored('shoe_cards').components.find((c) => c.type === 'CAROUSEL') as { cards: unknown[] };
      expect(carousel.cards[0]).toEqual({
        components: [
          { type: 'HEADER', format: 'IMAGE', example: { header_handle: [HANDLE] } },
          { type: 'BODY', text: 'Pair {{1}} for you', example: { body_text: [['#1']] } },
          {
            type: 'BUTTONS',
            buttons: [
              { type: 'QUICK_REPLY', text: 'Want it' },
              { type: 'URL', text: 'Buy', url: 'https://shop.example.com/buy' },
            ],
          },
        ],
      });
      const cardValues = (n: number) => ({
        headerMedia: { type: 'image', url: `https://cdn.example.com/${n}.jpg` },
        body: [`#${n}`],
      });
      const sent = await send('+15556100042', {
        name: 'shoe_cards',
        components: { body: ['Ana'], cards: [cardValues(1), cardValues(2)] },
      });
      expect(sent.status).toBe(201);
      const m = await settled(sent.body.messageId);
      expect(['sent', 'delivered']).toContain(m.status);
    });

    it('refuses a definition that breaks the rules, naming each path, before any provider call', async () => {
      const before = emu.state.templateCalls.filter((c) => c.operation === 'create').length;
      const cases: [Record<string, unknown>, string[]][] = [
        [
          { name: 'a1', category: 'AUTHENTICATION', body: 'Code {{1}} here', examples: [{ name: '1', text: '1' }] },
          ['authentication', 'body'],
        ],
        [
          { name: 'a2', category: 'AUTHENTICATION', authentication: { otpType: 'ONE_TAP' } },
          ['authentication.packageName', 'authentication.signatureHash'],
        ],
        [{ name: 'a3', category: 'UTILITY', body: 'Hi', authentication: { otpType: 'COPY_CODE' } }, ['authentication']],
        [{ name: 'a4', category: 'UTILITY' }, ['body']],
        [{ name: 'h1', category: 'UTILITY', body: 'Hi', header: { format: 'IMAGE' } }, ['header.exampleHandle']],
        [
          { name: 'h2', category: 'UTILITY', body: 'Hi', header: { format: 'TEXT', text: 'For {{1}} and {{2}}' } },
          ['header.text'],
        ],
        [
          { name: 'h3', category: 'UTILITY', body: 'Hi', header: { format: 'TEXT', text: 'For {{1}}' } },
          ['header.example'],
        ],
        [
          {
            name: 'b1',
            category: 'UTILITY',
            body: 'Hi',
            buttons: [
              { type: 'URL', text: 'Go', url: 'https://x.example.com/{{1}}' },
              { type: 'COPY_CODE', text: 'Copy', example: 'SAVE10' },
              { type: 'PHONE_NUMBER', text: 'Call', phoneNumber: '555' },
              { type: 'URL', text: 'Go', url: 'http://x.example.com/' },
            ],
          },
          ['buttons.0.example', 'buttons.1.text', 'buttons.2.phoneNumber', 'buttons.3.url'],
        ],
        [
          {
            name: 'c1',
            category: 'MARKETING',
            body: 'Hi',
            footer: 'x',
            cards: [
              {
                header: { format: 'IMAGE', exampleHandle: HANDLE },
                body: 'A {{1}}',
                buttons: [{ type: 'QUICK_REPLY', text: 'A' }],
              },
              {
                header: { format: 'VIDEO', exampleHandle: HANDLE },
                body: 'B',
                buttons: [{ type: 'QUICK_REPLY', text: 'B' }],
              },
            ],
          },
          ['footer', 'cards.0.examples', 'cards.1'],
        ],
      ];
      for (const [body, paths] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(paths);
      }
      expect(emu.state.templateCalls.filter((c) => c.operation === 'create').length).toBe(before);
    });
  });
});
