// Inbound click-to-chat ad attribution (`referral`) and catalog orders (issue #35 item 2, decision
// 0064), through the real service, the emulator's signed webhooks and the portal: the referral
// kept on the inbound message (API, message.inbound) and on the sender's first contact (GET
// /inbound-senders, sender.first_inbound; never replaced by a later ad; kept when the id and the
// number of one person are joined); an order kept with its items; both shown in the portal.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Row = Record<string, any>;

// A click-to-chat ad's referral, in the provider's shape (docs/provider-protocol-2026.md).
const AD = {
  source_url: 'https://fb.me/3cr4Wqqkv',
  source_id: '120226305854810726',
  source_type: 'ad',
  body: 'Chat with us for a free quote',
  headline: 'Spring sale: 20% off sofas',
  media_type: 'image',
  image_url: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/ad.jpg',
  ctwa_clid: 'ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv',
  welcome_message: { text: 'Hi! How can we help?' },
};
const AD_VIEW = {
  sourceUrl: 'https://fb.me/3cr4Wqqkv',
  sourceId: '120226305854810726',
  sourceType: 'ad',
  body: 'Chat with us for a free quote',
  headline: 'Spring sale: 20% off sofas',
  mediaType: 'image',
  imageUrl: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/ad.jpg',
  videoUrl: null,
  thumbnailUrl: null,
  ctwaClid: AD.ctwa_clid,
};
const OTHER_AD = { source_url: 'https://fb.me/other', source_id: '999', source_type: 'post', headline: 'Another post' };

describe('inbound referral and order', () => {
  let svc: Service;
  let emu: Emulator;
  let rx: Receiver;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    await stop();
  });
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  const inbound = async (t: OfficialCustomer, body: Record<string, unknown>) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], name: 'Ana Ruiz', timestamp: t0 + n++, ...body }),
    });
    expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
  };
  const inbox = async (t: OfficialCustomer, count: number) =>
    eventually(async () => {
      const rows = (await call(svc.url, 'GET', '/inbound-messages?limit=100', { key: t.key })).body
        .inboundMessages as Row[];
      return rows.length === count && rows;
    });
  const events = (t: OfficialCustomer, type: string, count: number) =>
    eventually(async () => {
      const e = rx.requests
        .filter((r) => r.path === `/c/${t.customerId}`)
        .map((r) => JSON.parse(r.body) as Row)
        .filter((x) => x.type === type);
      return e.length === count && e;
    });
  const sender = async (t: OfficialCustomer, phone: string) =>
    (await call(svc.url, 'GET', `/inbound-senders/${encodeURIComponent(phone)}`, { key: t.key })).body;

  it("keeps an ad's referral on the message and on the sender's first contact, shown in the API, events and portal", async () => {
    const t = await officialCustomer(svc.url, emu, { receiver: rx });
    await inbound(t, {
      from: '16505558001',
      message: { type: 'text', text: { body: 'Is the grey sofa in stock?' }, referral: AD },
    });
    const [first] = await inbox(t, 1);
    expect(first).toMatchObject({ messageType: 'text', text: 'Is the grey sofa in stock?', referral: AD_VIEW });
    const [inEvent] = await events(t, 'message.inbound', 1);
    expect(inEvent!.data.referral).toEqual(AD_VIEW);
    const [firstEvent] = await events(t, 'sender.first_inbound', 1);
    expect(firstEvent!.data).toMatchObject({ from: '+16505558001', referral: AD_VIEW });
    expect(await sender(t, '+16505558001')).toMatchObject({ hasWritten: true, firstReferral: AD_VIEW });

    // Later messages, with no referral or another ad's, leave the first contact's as it was.
    await inbound(t, { from: '16505558001', text: 'Thanks' });
    await inbound(t, {
      from: '16505558001',
      message: { type: 'text', text: { body: 'Me again' }, referral: OTHER_AD },
    });
    const rows = await inbox(t, 3);
    expect(rows[0]!.referral).toMatchObject({ sourceType: 'post', headline: 'Another post', ctwaClid: null });
    expect(rows[1]!.referral).toBeNull();
    expect((await sender(t, '+16505558001')).firstReferral).toEqual(AD_VIEW);
    // A sender who came from no ad has none.
    await inbound(t, { from: '16505558002', text: 'Hello' });
    await inbox(t, 4);
    expect(await sender(t, '+16505558002')).not.toHaveProperty('firstReferral');

    // The portal: the inbound message's page and the conversation.
    await createPortalUser(svc.url, t.customerId, 'owner@referral.example');
    const portal = new PortalClient(svc.url);
    expect((await portal.login('owner@referral.example')).status).toBe(303);
    const msgPage = await portal.get(`/portal/inbox/${first!.inboundMessageId}`);
    expect(msgPage.status).toBe(200);
    expect(msgPage.text).toContain('Spring sale: 20% off sofas');
    expect(msgPage.text).toContain('href="https://fb.me/3cr4Wqqkv"');
    expect(msgPage.text).toContain(AD.ctwa_clid);
    const convo = await portal.get(`/portal/conversations/${t.accountIds[0]}/%2B16505558001`);
    expect(convo.status).toBe(200);
    expect(convo.text).toMatch(/class="first-referral"[^]*Spring sale: 20% off sofas/);
  });

  it('keeps the first referral of a user known by id when their number becomes known', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, {
      fromUserId: 'US.8001',
      userIdIn: 'contacts',
      message: { type: 'text', text: { body: 'From the ad' }, referral: AD },
    });
    await inbox(t, 1);
    await inbound(t, { from: '16505558003', fromUserId: 'US.8001', text: 'my number now shows' });
    await inbox(t, 2);
    const s = await eventually(async () => {
      const x = await sender(t, '+16505558003');
      return x.inboundCount === 2 && x;
    });
    expect(s.firstReferral).toEqual(AD_VIEW);
  });

  it('keeps an order with its items, in the API, the event and the portal', async () => {
    const t = await officialCustomer(svc.url, emu, { receiver: rx });
    await inbound(t, {
      from: '16505558004',
      message: {
        type: 'order',
        order: {
          catalog_id: '194836987003835',
          text: 'Please deliver after 6pm',
          product_items: [
            { product_retailer_id: 'sofa-grey-3', quantity: 1, item_price: 499.5, currency: 'USD' },
            { product_retailer_id: 'cushion-blue', quantity: '4', item_price: '12', currency: 'USD' },
          ],
        },
      },
    });
    const [row] = await inbox(t, 1);
    const order = {
      catalogId: '194836987003835',
      text: 'Please deliver after 6pm',
      productItems: [
        { productRetailerId: 'sofa-grey-3', quantity: 1, itemPrice: 499.5, currency: 'USD' },
        { productRetailerId: 'cushion-blue', quantity: 4, itemPrice: 12, currency: 'USD' },
      ],
    };
    expect(row).toMatchObject({ messageType: 'order', text: 'Please deliver after 6pm', order, referral: null });
    const one = await call(svc.url, 'GET', `/inbound-messages/${row!.inboundMessageId}`, { key: t.key });
    expect(one.body.order).toEqual(order);
    const [event] = await events(t, 'message.inbound', 1);
    expect(event!.data).toMatchObject({ messageType: 'order', order });
    expect(event!.data).not.toHaveProperty('referral');

    await createPortalUser(svc.url, t.customerId, 'owner@order.example');
    const portal = new PortalClient(svc.url);
    expect((await portal.login('owner@order.example')).status).toBe(303);
    const page = await portal.get(`/portal/inbox/${row!.inboundMessageId}`);
    expect(page.text).toContain('sofa-grey-3');
    expect(page.text).toContain('cushion-blue');
    expect(page.text).toContain('194836987003835');
    const list = await portal.get('/portal/inbox');
    expect(list.text).toMatch(/class="order"[^]*of 2 items/);
  });
});
