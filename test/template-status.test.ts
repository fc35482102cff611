// Template status from the provider (decision 0015), through the real service, the emulator's
// review controls (which post signed template webhooks) and real webhook receivers: one
// template.status event per change in the provider's time order, an older update never
// regressing the state, quality and category updates, routing by WABA with isolation between
// customers, and sends of a PAUSED or DISABLED template failing at once without a provider call.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, createAccount, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Event = { type: string; data: Record<string, any> };

describe('template status from the provider', () => {
  let svc: Service;
  let emu: Emulator;
  let rx: Receiver;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    rx = await startReceiver();
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
  });
  afterAll(async () => {
    await rx.close();
    await stop();
  });
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  const customer = (opts: { plan?: string; accounts?: number } = {}) =>
    officialCustomer(svc.url, emu, { receiver: rx, ...opts });
  /** A review change in the emulator; it answers once our service acknowledged the webhooks. */
  const review = async (t: OfficialCustomer, name: string, change: Record<string, unknown>, i = 0) => {
    const res = await emu.reviewTemplate(t.wabaIds[i]!, t.templateIds[i]![name]!, change as never);
    expect(res.webhooksDelivered).toBe(true);
    return res;
  };
  const templateEvents = (customerId: string) =>
    svc.db.query<Event>(
      `SELECT type, data FROM events WHERE customer_id = $1 AND type = 'template.status' ORDER BY created_at, id`,
      [customerId],
    );
  const received = (customerId: string) =>
    rx.requests
      .filter((r) => r.path === `/c/${customerId}` && r.headers['x-svc-event'] === 'template.status')
      .map((r) => JSON.parse(r.body) as Event);
  const send = async (t: OfficialCustomer, to: string, name: string, i = 0) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `tpl-${n++}`,
        chatAccountId: t.accountIds[i],
        to: { type: 'phone', phoneE164: to },
        content: { type: 'template', template: { name, language: 'en_US' } },
      },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const settled = (t: OfficialCustomer, id: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      return m.status !== 'pending' && m.status !== 'queued' && m;
    });

  it('one event per status change, in the provider time order; an older update or a repeat changes nothing', async () => {
    const t = await customer();
    await review(t, 'receipt', { status: 'PAUSED', timestamp: t0 + 10 });
    await review(t, 'receipt', { status: 'APPROVED', timestamp: t0 + 20 });
    await review(t, 'receipt', { status: 'DISABLED', timestamp: t0 + 15 }); // late: older than APPROVED
    await review(t, 'receipt', { status: 'APPROVED', timestamp: t0 + 20 }); // a redelivery
    await review(t, 'receipt', { status: 'REJECTED', rejectedReason: 'INVALID_FORMAT', timestamp: t0 + 30 });
    const events = await templateEvents(t.customerId);
    expect(events.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      [null, 'PAUSED'],
      ['PAUSED', 'APPROVED'],
      ['APPROVED', 'REJECTED'],
    ]);
    expect(events[2]!.data).toEqual({
      chatAccountId: t.accountIds[0],
      templateId: t.templateIds[0]!.receipt,
      name: 'receipt',
      language: 'en_US',
      status: 'REJECTED',
      previousStatus: 'APPROVED',
      category: 'UTILITY',
      qualityScore: null,
      reason: 'INVALID_FORMAT',
      change: 'status',
      timestamp: new Date((t0 + 30) * 1000).toISOString(),
    });
    // The endpoint gets each of them once, in the spec's envelope.
    await eventually(async () => received(t.customerId).length === 3);
    expect(
      received(t.customerId)
        .map((e) => e.data.status)
        .sort(),
    ).toEqual(['APPROVED', 'PAUSED', 'REJECTED']);
    // The stored state is the newest.
    const [row] = await svc.db.query<{ status: string; reason: string }>(
      `SELECT status, reason FROM template_states WHERE chat_account_id = $1`,
      [t.accountIds[0]],
    );
    expect(row).toEqual({ status: 'REJECTED', reason: 'INVALID_FORMAT' });
  });

  it('quality and category updates: one event each, the status kept, each ordered on its own', async () => {
    const t = await customer();
    await review(t, 'promo', { status: 'APPROVED', timestamp: t0 + 1 });
    await review(t, 'promo', { qualityScore: 'YELLOW', timestamp: t0 + 5 });
    await review(t, 'promo', { qualityScore: 'RED', timestamp: t0 + 3 }); // late: ignored
    await review(t, 'promo', { category: 'UTILITY', timestamp: t0 + 4 }); // older than the quality, newer than none
    const events = await templateEvents(t.customerId);
    expect(
      events.map((e) => [e.data.change, e.data.status, e.data.previousStatus, e.data.qualityScore, e.data.category]),
    ).toEqual([
      ['status', 'APPROVED', null, null, 'MARKETING'],
      ['quality', 'APPROVED', 'APPROVED', 'YELLOW', 'MARKETING'],
      ['category', 'APPROVED', 'APPROVED', 'YELLOW', 'UTILITY'],
    ]);
  });

  it('the reported category is what the opt-out check of marketing templates goes by', async () => {
    const t = await customer();
    const listed = '+15554200001';
    const add = await call(svc.url, 'POST', `/chat-accounts/${t.accountIds[0]}/suppressions`, {
      key: t.key,
      body: { phone: listed, reason: 'test' },
    });
    expect(add.status).toBe(201);
    // receipt (UTILITY in the catalog) still reaches a listed number ...
    expect(await settled(t, await send(t, listed, 'receipt'))).toMatchObject({ status: 'sent' });
    // ... until the provider moves it to MARKETING (the catalog look-up is cached; the webhook wins).
    await review(t, 'receipt', { category: 'MARKETING', timestamp: t0 + 10 });
    const m = await settled(t, await send(t, listed, 'receipt'));
    expect(m).toMatchObject({ status: 'failed', error: { code: 'RECIPIENT_OPTED_OUT' } });
  });

  it('routes by WABA: only the owner of the WABA stores the change and gets the event', async () => {
    const a = await customer({ accounts: 2 });
    const b = await customer();
    await review(a, 'receipt', { status: 'PAUSED', timestamp: t0 + 10 }, 1);
    const events = await templateEvents(a.customerId);
    expect(events.map((e) => e.data.chatAccountId)).toEqual([a.accountIds[1]]);
    expect(await templateEvents(b.customerId)).toEqual([]);
    await eventually(async () => received(a.customerId).length === 1);
    // B's endpoint got none: B's own change arrives, and only it.
    await review(b, 'receipt', { status: 'DISABLED', timestamp: t0 + 10 });
    await eventually(async () => received(b.customerId).length === 1);
    expect(received(b.customerId).map((e) => e.data.chatAccountId)).toEqual([b.accountIds[0]]);
    expect(received(a.customerId)).toHaveLength(1);
    // A's other account (another WABA) still sends the template.
    const other = await send(a, '+15554000001', 'receipt', 0);
    expect(await settled(a, other)).toMatchObject({ status: 'sent' });
  });

  it('every account of the WABA keeps its own state and gets its own event', async () => {
    const t = await customer();
    const second = await createAccount(svc.url, t.customerId, {
      official: { phoneNumberId: `pn-second-${n++}`, wabaId: t.wabaIds[0], accessToken: 'EAAG-send' },
    });
    await review(t, 'promo', { status: 'PAUSED', timestamp: t0 + 10 });
    const events = await templateEvents(t.customerId);
    expect(events.map((e) => e.data.chatAccountId).sort()).toEqual([t.accountIds[0], second].sort());
    expect(new Set(events.map((e) => e.data.status))).toEqual(new Set(['PAUSED']));
  });

  it('a plan without webhooks keeps the state (and the send check) but queues no delivery', async () => {
    const t = await customer();
    const plan = await call(svc.url, 'PATCH', `/admin/customers/${t.customerId}`, {
      admin: true,
      body: { plan: 'starter' },
    });
    expect(plan.status).toBe(200);
    await review(t, 'receipt', { status: 'PAUSED', timestamp: t0 + 10 });
    expect(await templateEvents(t.customerId)).toHaveLength(1);
    const deliveries = await svc.db.query(`SELECT 1 FROM webhook_deliveries WHERE customer_id = $1`, [t.customerId]);
    expect(deliveries).toEqual([]);
    const m = await settled(t, await send(t, '+15554000002', 'receipt'));
    expect(m).toMatchObject({ status: 'failed', error: { code: 'TEMPLATE_NOT_APPROVED' } });
  });

  it('a send of a PAUSED or DISABLED template fails at once, no provider call, quota given back; APPROVED sends again', async () => {
    const t = await customer();
    const usage = async () =>
      (await svc.db.query<{ used: number }>(`SELECT used FROM quota_usage WHERE customer_id = $1`, [t.customerId]))[0]
        ?.used ?? 0;
    for (const [status, to] of [
      ['PAUSED', '+15554100001'],
      ['DISABLED', '+15554100002'],
    ] as const) {
      await review(t, 'promo', { status, timestamp: t0 + n++ });
      const m = await settled(t, await send(t, to, 'promo'));
      expect(m).toMatchObject({ status: 'failed', attemptCount: 0, error: { code: 'TEMPLATE_NOT_APPROVED' } });
      expect(m.error.message).toContain(status);
      expect(emu.sent().filter((s) => s.to === to.slice(1))).toEqual([]);
    }
    expect(Number(await usage())).toBe(0);
    // Other templates of the account are unaffected, and an approved template sends again.
    expect(await settled(t, await send(t, '+15554100003', 'receipt'))).toMatchObject({ status: 'sent' });
    await review(t, 'promo', { status: 'APPROVED', timestamp: t0 + 100 });
    expect(await settled(t, await send(t, '+15554100004', 'promo'))).toMatchObject({ status: 'sent' });
    expect(emu.sent().map((s) => s.to)).toEqual(expect.arrayContaining(['15554100003', '15554100004']));
  });
});
