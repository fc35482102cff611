// What each message costs (issue #25 item 3, decision 0035), through the real service, the
// emulator and its signed status webhooks: the receipt's `pricing` stored on the message as
// received and shown by GET /messages/{id} and the list, counted once per message in GET /usage
// (by category and billable / free / unknown) and on the portal's overview; a parked receipt keeps
// its price; a receipt's own word wins over anything a category would suggest.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';

describe('per-message pricing from status receipts', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu, { statuses: ['sent', 'delivered', 'read'] }));

  const send = async (t: OfficialCustomer, content: unknown) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `price-${n}`,
        to: { type: 'phone', phoneE164: `+1650556${String(n++).padStart(4, '0')}` },
        content,
      },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const message = async (t: OfficialCustomer, id: string) =>
    (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
  const reached = (t: OfficialCustomer, id: string, status: string) =>
    eventually(async () => {
      const m = await message(t, id);
      return m.status === status && m;
    });
  const usage = async (t: OfficialCustomer) => (await call(svc.url, 'GET', '/usage', { key: t.key })).body;
  const promo = { type: 'template', template: { name: 'promo', language: 'en_US' } };
  const receipt = { type: 'template', template: { name: 'receipt', language: 'en_US' } };

  it('stores the pricing of the receipts on the message and counts each message once in GET /usage', async () => {
    const t = await officialCustomer(svc.url, emu);
    const ids = [
      await send(t, promo),
      await send(t, promo),
      await send(t, receipt),
      await send(t, { type: 'text', text: 'hi' }),
    ];
    for (const id of ids) await reached(t, id, 'read');
    // The emulator puts the price on `sent` and on `delivered`, as the provider does: one count each.
    expect((await message(t, ids[0]!)).pricing).toEqual({
      billable: true,
      pricingModel: 'PMP',
      category: 'marketing',
      type: 'regular',
    });
    expect((await message(t, ids[2]!)).pricing).toMatchObject({ category: 'utility', billable: true });
    expect((await message(t, ids[3]!)).pricing).toEqual({
      billable: false,
      pricingModel: 'PMP',
      category: 'service',
      type: 'free_customer_service',
    });
    const list = (await call(svc.url, 'GET', '/messages?limit=10', { key: t.key })).body.messages as any[];
    expect(list.find((m) => m.messageId === ids[0]).pricing).toMatchObject({ category: 'marketing' });
    const u = await usage(t);
    expect(u.pricing).toEqual({
      billable: 3,
      free: 1,
      unknown: 0,
      byCategory: [
        { category: 'marketing', billable: 2, free: 0, unknown: 0 },
        { category: 'service', billable: 0, free: 1, unknown: 0 },
        { category: 'utility', billable: 1, free: 0, unknown: 0 },
      ],
    });
    // The portal's overview shows the same counts.
    await createPortalUser(svc.url, t.customerId, `pricing-${t.customerId}@example.com`);
    const portal = new PortalClient(svc.url);
    expect((await portal.login(`pricing-${t.customerId}@example.com`)).status).toBe(303);
    const overview = (await portal.request('GET', '/portal')).text;
    const section = overview.slice(overview.indexOf('id="pricing-h"'));
    const row = (name: string) =>
      [
        ...section.matchAll(
          new RegExp(`<th scope="row">${name}</th>\\s*<td>(\\d+)</td>\\s*<td>(\\d+)</td>\\s*<td>(\\d+)</td>`, 'g'),
        ),
      ][0]
        ?.slice(1)
        .map(Number);
    expect(row('marketing')).toEqual([2, 0, 0]);
    expect(row('service')).toEqual([0, 1, 0]);
    expect(row('All')).toEqual([3, 1, 0]);
    // And the message's page its price.
    const detail = (await portal.request('GET', `/portal/messages/${ids[0]}`)).text;
    expect(detail).toContain('<dt>Pricing</dt>');
    expect(detail).toContain('marketing, billable (regular, PMP)');
  });

  it('stores what the receipt says, not what the category suggests, and none when it carries none', async () => {
    const t = await officialCustomer(svc.url, emu);
    await emu.settings({
      pricing: { billable: false, pricing_model: 'PMP', type: 'free_entry_point', category: 'marketing' },
    });
    const free = await send(t, promo);
    await reached(t, free, 'read');
    await emu.settings({ pricing: { pricing_model: 'PMP', category: 'marketing_lite', type: 'regular' } });
    const unsaid = await send(t, promo);
    await reached(t, unsaid, 'read');
    await emu.settings({ pricing: null });
    const none = await send(t, promo);
    await reached(t, none, 'read');
    expect((await message(t, free)).pricing).toEqual({
      billable: false,
      pricingModel: 'PMP',
      category: 'marketing',
      type: 'free_entry_point',
    });
    expect((await message(t, unsaid)).pricing).toEqual({
      billable: null,
      pricingModel: 'PMP',
      category: 'marketing_lite',
      type: 'regular',
    });
    expect((await message(t, none)).pricing).toBeNull();
    expect((await usage(t)).pricing).toEqual({
      billable: 0,
      free: 1,
      unknown: 1,
      byCategory: [
        { category: 'marketing', billable: 0, free: 1, unknown: 0 },
        { category: 'marketing_lite', billable: 0, free: 0, unknown: 1 },
      ],
    });
  });

  it('a priced receipt that beats the send (parked) keeps its price', async () => {
    const t = await officialCustomer(svc.url, emu);
    await resetEmulator(emu, { statuses: ['sent'], beforeResponse: true, omitCallbackData: true });
    const id = await send(t, promo);
    await reached(t, id, 'sent');
    await eventually(async () => (await message(t, id)).pricing !== null);
    expect((await message(t, id)).pricing).toMatchObject({ category: 'marketing', billable: true });
    expect((await usage(t)).pricing).toMatchObject({ billable: 1, free: 0 });
  });
});
