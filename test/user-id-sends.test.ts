// Sends addressed by a business-scoped user id (issue #25 item 2, decision 0036), through the real
// service, the emulator and its signed webhooks: resolved to the number the account knows for
// the id, else sent by id in the provider's `recipient` field; the suppression list, the reply
// window and idempotency keyed by the recipient key when only the id is known; the provider's
// user_changed_user_id moving all of them; the id on the message and its events; validation paths.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';

type Event = { type: string; data: Record<string, any> };

describe('sends to a business-scoped user id', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu, { statuses: ['sent', 'delivered'] }));

  const inbound = async (t: OfficialCustomer, body: Record<string, unknown>) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], text: `hi ${n}`, timestamp: t0 + n++, ...body }),
    });
    expect(((await res.json()) as { delivered: boolean }).delivered).toBe(true);
  };
  const post = (t: OfficialCustomer, body: Record<string, unknown>) =>
    call(svc.url, 'POST', '/messages', { key: t.key, body: { externalId: `uid-send-${n++}`, ...body } });
  const sendTo = async (t: OfficialCustomer, userId: string, content: unknown, extra: Record<string, unknown> = {}) => {
    const res = await post(t, { to: { type: 'userId', userId }, content, ...extra });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.messageId as string;
  };
  const message = async (t: OfficialCustomer, id: string) =>
    (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
  const reached = (t: OfficialCustomer, id: string, status: string) =>
    eventually(async () => {
      const m = await message(t, id);
      return m.status === status && m;
    });
  const statusEvents = (customerId: string) =>
    svc.db.query<Event>(
      `SELECT type, data FROM events WHERE customer_id = $1 AND type = 'message.status' ORDER BY created_at, id`,
      [customerId],
    );
  const text = { type: 'text', text: 'hello' };
  const promo = { type: 'template', template: { name: 'promo', language: 'en_US' } };

  it('resolves a user id to the number the account knows for it, and shows the id on the message and events', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, { from: '16505550501', fromUserId: 'US.5001' });
    const id = await sendTo(t, 'US.5001', text);
    const m = await reached(t, id, 'delivered');
    expect(m).toMatchObject({ recipient: '+16505550501', recipientUserId: 'US.5001' });
    const sent = emu.sent().filter((s) => s.messageId === id);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.payload).toMatchObject({ to: '16505550501' });
    expect(sent[0]!.payload).not.toHaveProperty('recipient');
    const events = (await statusEvents(t.customerId)).filter((e) => e.data.messageId === id);
    expect(events.map((e) => [e.data.status, e.data.recipient, e.data.recipientUserId])).toEqual([
      ['sent', '+16505550501', 'US.5001'],
      ['delivered', '+16505550501', 'US.5001'],
    ]);
    // A send to a number shows no id.
    const byPhone = await post(t, { to: { type: 'phone', phoneE164: '+16505550502' }, content: text });
    expect((await reached(t, byPhone.body.messageId, 'delivered')).recipientUserId).toBeNull();
  });

  it("sends an unknown user id by the provider's recipient field, and its receipts apply", async () => {
    const t = await officialCustomer(svc.url, emu);
    const id = await sendTo(t, 'US.5002', text);
    const m = await reached(t, id, 'delivered');
    expect(m).toMatchObject({ recipient: 'US.5002', recipientUserId: 'US.5002' });
    const sent = emu.sent().filter((s) => s.messageId === id);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.payload).toMatchObject({ messaging_product: 'whatsapp', recipient: 'US.5002', type: 'text' });
    expect(sent[0]!.payload).not.toHaveProperty('to');
    const events = (await statusEvents(t.customerId)).filter((e) => e.data.messageId === id);
    expect(events.map((e) => [e.data.status, e.data.recipient, e.data.recipientUserId])).toEqual([
      ['sent', 'US.5002', 'US.5002'],
      ['delivered', 'US.5002', 'US.5002'],
    ]);
  });

  it('keeps the suppression list and the reply window by user id when no number is known', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, { fromUserId: 'US.5003', text: 'STOP' }); // opts out; opens the window
    const refused = await sendTo(t, 'US.5003', promo);
    expect(await reached(t, refused, 'failed')).toMatchObject({
      attemptCount: 0,
      error: { code: 'RECIPIENT_OPTED_OUT' },
    });
    const windowed = await sendTo(t, 'US.5003', text, { requireReplyWindow: true });
    await reached(t, windowed, 'delivered');
    const closed = await sendTo(t, 'US.5004', text, { requireReplyWindow: true }); // never wrote
    expect(await reached(t, closed, 'failed')).toMatchObject({ error: { code: 'REENGAGEMENT_REQUIRED' } });
    expect(emu.sent().filter((s) => s.messageId === refused || s.messageId === closed)).toHaveLength(0);
    // The entry is the id's: listed under it, and removed by it.
    const base = `/chat-accounts/${t.accountIds[0]}/suppressions`;
    const list = await call(svc.url, 'GET', base, { key: t.key });
    expect(list.body.suppressions).toMatchObject([{ phone: 'US.5003', source: 'keyword' }]);
    expect((await call(svc.url, 'DELETE', `${base}/US.5003`, { key: t.key })).status).toBe(204);
    await reached(t, await sendTo(t, 'US.5003', promo), 'delivered');
    expect((await call(svc.url, 'POST', base, { key: t.key, body: { phone: 'US.5003' } })).status).toBe(201);
    const again = await sendTo(t, 'US.5003', promo);
    expect(await reached(t, again, 'failed')).toMatchObject({ error: { code: 'RECIPIENT_OPTED_OUT' } });
  });

  it('answers a repeat by user id with the same message, and another recipient under the same externalId with 409', async () => {
    const t = await officialCustomer(svc.url, emu);
    const body = { externalId: `uid-idem-${n++}`, to: { type: 'userId', userId: 'US.5010' }, content: text };
    const first = await call(svc.url, 'POST', '/messages', { key: t.key, body });
    const again = await call(svc.url, 'POST', '/messages', { key: t.key, body });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.messageId).toBe(first.body.messageId);
    const other = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { ...body, to: { type: 'userId', userId: 'US.5011' } },
    });
    expect(other.status).toBe(409);
    const phone = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { ...body, to: { type: 'phone', phoneE164: '+16505550510' } },
    });
    expect(phone.status).toBe(409);
  });

  it('user_changed_user_id moves the suppression, the reply window and unsent messages to the new id', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, { fromUserId: 'US.5020', text: 'STOP' });
    const sendAt = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const later = await sendTo(t, 'US.5020', text, { sendAt });
    await inbound(t, { fromUserId: 'US.5021', previousUserId: 'US.5020' }); // the system message
    expect(await message(t, later)).toMatchObject({
      status: 'pending',
      recipient: 'US.5021',
      recipientUserId: 'US.5021',
    });
    const refused = await sendTo(t, 'US.5021', promo);
    expect(await reached(t, refused, 'failed')).toMatchObject({ error: { code: 'RECIPIENT_OPTED_OUT' } });
    const windowed = await sendTo(t, 'US.5021', text, { requireReplyWindow: true });
    expect((await reached(t, windowed, 'delivered')).recipient).toBe('US.5021');
    // The old id keeps nothing: a send to it finds no window.
    const old = await sendTo(t, 'US.5020', text, { requireReplyWindow: true });
    expect(await reached(t, old, 'failed')).toMatchObject({ error: { code: 'REENGAGEMENT_REQUIRED' } });
  });

  it('moves what was kept under a user id alone to the number once the number becomes known', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, { fromUserId: 'US.5030', text: 'STOP' });
    await inbound(t, { fromUserId: 'US.5030', from: '16505550530' });
    const refused = await sendTo(t, 'US.5030', promo);
    expect(await reached(t, refused, 'failed')).toMatchObject({
      recipient: '+16505550530',
      error: { code: 'RECIPIENT_OPTED_OUT' },
    });
    const sender = await call(svc.url, 'GET', '/inbound-senders/%2B16505550530', { key: t.key });
    expect(sender.body).toMatchObject({ hasWritten: true, inboundCount: 2, optedOut: true });
  });

  it('names the path of every problem with a user id recipient', async () => {
    const t = await officialCustomer(svc.url, emu);
    const problems = async (to: unknown) => {
      const res = await post(t, { to, content: text });
      expect(res.status).toBe(400);
      return (res.body.details as { path: string }[]).map((d) => d.path);
    };
    expect(await problems({ type: 'userId' })).toEqual(['to.userId']);
    expect(await problems({ type: 'userId', userId: 'US.1', phoneE164: '+16505550999' })).toEqual(['to.phoneE164']);
    expect(await problems({ type: 'userId', userId: '16505550999' })).toEqual(['to.userId']);
    expect(await problems({ type: 'phone', userId: 'US.1' })).toEqual(['to.phoneE164', 'to.userId']);
    expect(await problems({ type: 'email', userId: 'US.1' })).toEqual(['to.type']);
  });
});
