// Users the provider identifies by a business-scoped user id (decision 0015), through the real
// service, the emulator and signed provider webhooks: fromUserId on inbound messages and in the
// message.inbound event, the user_changed_user_id system message moving the id-to-number mapping,
// receipts that name only recipient_user_id, and 131049 / 130472 on marketing and utility
// templates never retried.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { APP_SECRET, type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';

type Event = { type: string; data: Record<string, any> };

describe('users known by a business-scoped user id', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  const customer = () => officialCustomer(svc.url, emu);
  const inbound = async (t: OfficialCustomer, body: Record<string, unknown>) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Distinct, increasing provider times: the inbox lists newest first.
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], text: `hi ${n}`, timestamp: t0 + n++, ...body }),
    });
    const answer = (await res.json()) as { id: string; delivered: boolean };
    expect(answer.delivered).toBe(true);
    return answer.id;
  };
  const inboundEvents = (customerId: string) =>
    svc.db.query<Event>(
      `SELECT type, data FROM events WHERE customer_id = $1 AND type = 'message.inbound' ORDER BY created_at, id`,
      [customerId],
    );
  const inbox = async (t: OfficialCustomer) =>
    (await call(svc.url, 'GET', '/inbound-messages?limit=100', { key: t.key })).body.inboundMessages as Record<
      string,
      unknown
    >[];
  const send = async (t: OfficialCustomer, to: string, content: unknown) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { externalId: `uid-${n++}`, to: { type: 'phone', phoneE164: to }, content },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const message = async (t: OfficialCustomer, id: string) =>
    (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
  const settled = (t: OfficialCustomer, id: string) =>
    eventually(async () => {
      const m = await message(t, id);
      return m.status !== 'pending' && m.status !== 'queued' && m;
    });

  it('fromUserId on inbound messages and in message.inbound, the number resolved from a known id', async () => {
    const t = await customer();
    await inbound(t, { from: '16505550101', fromUserId: 'US.1001' }); // learns US.1001 → +16505550101
    await inbound(t, { fromUserId: 'US.1001' }); // no number: resolved from the id
    await inbound(t, { fromUserId: 'US.1002' }); // an id never seen with a number
    await inbound(t, { from: '16505550103' }); // a number without an id
    const events = await inboundEvents(t.customerId);
    expect(events.map((e) => [e.data.from, e.data.fromUserId])).toEqual([
      ['+16505550101', 'US.1001'],
      ['+16505550101', 'US.1001'],
      [null, 'US.1002'],
      ['+16505550103', null],
    ]);
    const items = await inbox(t);
    expect(items.map((i) => [i.from, i.fromUserId]).reverse()).toEqual(
      events.map((e) => [e.data.from, e.data.fromUserId]),
    );
  });

  it('user_changed_user_id moves the number to the new id and forgets the old one', async () => {
    const t = await customer();
    await inbound(t, { from: '16505550201', fromUserId: 'US.2001' });
    await inbound(t, { fromUserId: 'US.2002', previousUserId: 'US.2001' }); // the system message
    await inbound(t, { fromUserId: 'US.2002' });
    await inbound(t, { fromUserId: 'US.2001' });
    const events = await inboundEvents(t.customerId);
    expect(events.map((e) => [e.data.messageType, e.data.from, e.data.fromUserId])).toEqual([
      ['text', '+16505550201', 'US.2001'],
      ['system', '+16505550201', 'US.2002'],
      ['text', '+16505550201', 'US.2002'],
      ['text', null, 'US.2001'],
    ]);
  });

  it('a receipt that names only recipient_user_id (no number, no callback data) applies by wamid', async () => {
    const t = await customer();
    await emu.settings({ enabled: false }); // we post the receipt ourselves
    const id = await send(t, '+16505550301', { type: 'text', text: 'hello' });
    const sent = await settled(t, id);
    expect(sent).toMatchObject({ status: 'sent' });
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: t.wabaIds[0],
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: t.phoneNumberIds[0] },
                statuses: [
                  {
                    id: sent.providerMessageId,
                    status: 'delivered',
                    timestamp: String(Math.floor(Date.now() / 1000)),
                    recipient_user_id: 'US.3001',
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    const res = await call(svc.url, 'POST', '/provider/webhooks/app', {
      body,
      headers: {
        'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
      },
    });
    expect(res.status).toBe(200);
    expect(await message(t, id)).toMatchObject({ status: 'delivered' });
  });

  it('131049 and 130472 (sync and in a receipt) fail marketing and utility templates alike, never retried', async () => {
    const t = await customer();
    const cases = [
      { code: 131049, errorCode: 'ECOSYSTEM_LIMITED', async: true },
      { code: 131049, errorCode: 'ECOSYSTEM_LIMITED', async: false },
      { code: 130472, errorCode: 'RECIPIENT_IN_EXPERIMENT', async: true },
      { code: 130472, errorCode: 'RECIPIENT_IN_EXPERIMENT', async: false },
    ];
    for (const name of ['promo', 'receipt']) {
      for (const c of cases) {
        // Outside any MARKETING_BLOCKED_MARKETS an operator would set (US), so the provider is asked.
        const to = `4477009${String(4000 + n++).padStart(5, '0')}`;
        await emu.rule(
          c.async
            ? { to, asyncFailure: { code: c.code, title: 'Refused' } }
            : { to, httpStatus: 400, error: { code: c.code, message: 'Refused' } },
        );
        const id = await send(t, `+${to}`, { type: 'template', template: { name, language: 'en_US' } });
        const m = await eventually(async () => {
          const x = await message(t, id);
          return x.status === 'failed' && x;
        });
        expect(m, `${name} ${c.code} ${c.async}`).toMatchObject({ attemptCount: 1, error: { code: c.errorCode } });
        // Refused at once: no send recorded; refused in a receipt: the one accepted send.
        expect(emu.sent().filter((s) => s.to === to)).toHaveLength(c.async ? 1 : 0);
      }
    }
  });
});
