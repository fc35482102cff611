// Senders known only by a business-scoped user id (issue #35 item 1, decision 0064), through the
// real service, the emulator and its signed webhooks: a text whose sender is only in
// `contacts[0].user_id` (no `from`, no `from_user_id`) is stored, listed, evented and forwarded,
// the sender aggregate is keyed by the id, a reply to the id goes out by `recipient`, the number
// learned later joins both keys; `user_changed_user_id` with and without `from`; and an item we
// cannot read is kept as `unsupported` with its raw type and counted, never dropped.
import crypto from 'node:crypto';
import http from 'node:http';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { APP_SECRET, type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { metricSum } from './support/prometheus-text.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Row = Record<string, any>;

describe('senders known only by a user id', () => {
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
  beforeEach(() => resetEmulator(emu, { statuses: ['sent', 'delivered'] }));

  const inbound = async (t: OfficialCustomer, body: Record<string, unknown>) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], text: `hi ${n}`, timestamp: t0 + n++, ...body }),
    });
    const answer = (await res.json()) as { id: string; delivered: boolean };
    expect(answer.delivered).toBe(true);
    return answer.id;
  };
  const inbox = async (t: OfficialCustomer) =>
    (await call(svc.url, 'GET', '/inbound-messages?limit=100', { key: t.key })).body.inboundMessages as Row[];
  const senders = (t: OfficialCustomer) =>
    svc.db.query<{ phone_e164: string; inbound_count: number }>(
      'SELECT phone_e164, inbound_count FROM senders WHERE customer_id = $1 ORDER BY phone_e164',
      [t.customerId],
    );
  const delivered = (t: OfficialCustomer, type: string) =>
    rx.requests
      .filter((r) => r.path === `/c/${t.customerId}`)
      .map((r) => JSON.parse(r.body) as Row)
      .filter((e) => e.type === type);

  it('a text with the sender only in contacts[0].user_id is stored, listed, evented, forwarded and answered', async () => {
    const forwarded: Row[] = [];
    const target = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c)).on('end', () => (forwarded.push(JSON.parse(body)), res.writeHead(204).end()));
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    try {
      const t = await officialCustomer(svc.url, emu, { receiver: rx });
      const url = `http://127.0.0.1:${(target.address() as { port: number }).port}/forward`;
      const rule = await call(svc.url, 'POST', '/forwarding-rules', {
        key: t.key,
        body: { condition: { type: 'contains', pattern: 'colour' }, destination: { type: 'http', url } },
      });
      expect(rule.status).toBe(201);
      const wamid = await inbound(t, { fromUserId: 'US.7001', userIdIn: 'contacts', text: 'Another colour?' });
      const [listed] = await eventually(async () => {
        const rows = await inbox(t);
        return rows.length === 1 && rows;
      });
      expect(listed).toMatchObject({ from: null, fromUserId: 'US.7001', messageType: 'text', text: 'Another colour?' });
      const event = await eventually(async () => delivered(t, 'message.inbound')[0]);
      expect(event.data).toMatchObject({
        inboundMessageId: listed!.inboundMessageId,
        from: null,
        fromUserId: 'US.7001',
        text: 'Another colour?',
      });
      const fwd = await eventually(async () => forwarded[0]);
      expect(fwd).toMatchObject({ fromUserId: 'US.7001', text: 'Another colour?', from: null });
      expect(await senders(t)).toEqual([{ phone_e164: 'US.7001', inbound_count: 1 }]);
      expect(wamid).toMatch(/^wamid\./);

      // The reply: free text inside the reply window the id opened, sent by the provider's `recipient`.
      const reply = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: {
          externalId: `reply-${n++}`,
          to: { type: 'userId', userId: 'US.7001' },
          content: { type: 'text', text: 'Yes, in blue' },
          replyTo: { inboundMessageId: listed!.inboundMessageId },
        },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      const m = await eventually(async () => {
        const x = (await call(svc.url, 'GET', `/messages/${reply.body.messageId}`, { key: t.key })).body;
        return x.status === 'delivered' && x;
      });
      expect(m).toMatchObject({ recipient: 'US.7001', recipientUserId: 'US.7001' });
      const sent = emu.sent().filter((s) => s.messageId === reply.body.messageId);
      expect(sent[0]!.payload).toMatchObject({ recipient: 'US.7001', context: { message_id: wamid } });
      expect(sent[0]!.payload).not.toHaveProperty('to');
    } finally {
      await new Promise((r) => target.close(r));
    }
  });

  it('when the number becomes known later, the id and the number are one sender', async () => {
    const t = await officialCustomer(svc.url, emu);
    await inbound(t, { fromUserId: 'US.7002', userIdIn: 'contacts' });
    await inbound(t, { fromUserId: 'US.7002', userIdIn: 'contacts' });
    await eventually(async () => (await senders(t))[0]?.inbound_count === 2);
    // The user shows their number: `from` and `contacts[0].wa_id` with the same user id.
    await inbound(t, { from: '16505557002', fromUserId: 'US.7002', userIdIn: 'contacts' });
    await eventually(async () => (await senders(t)).length === 1 && (await senders(t))[0]!.phone_e164.startsWith('+'));
    expect(await senders(t)).toEqual([{ phone_e164: '+16505557002', inbound_count: 3 }]);
    const sender = await call(svc.url, 'GET', '/inbound-senders/%2B16505557002', { key: t.key });
    expect(sender.body).toMatchObject({ hasWritten: true, inboundCount: 3 });
    // Later messages by the id alone resolve to the number.
    await inbound(t, { fromUserId: 'US.7002', userIdIn: 'contacts' });
    const rows = await eventually(async () => {
      const r = await inbox(t);
      return r.length === 4 && r;
    });
    expect(rows.map((r) => [r.from, r.fromUserId])).toEqual([
      ['+16505557002', 'US.7002'],
      ['+16505557002', 'US.7002'],
      [null, 'US.7002'],
      [null, 'US.7002'],
    ]);
  });

  it('user_changed_user_id without from moves the id-only sender to the new id; with from it keeps the number', async () => {
    const t = await officialCustomer(svc.url, emu, { receiver: rx });
    await inbound(t, { fromUserId: 'US.7003', userIdIn: 'contacts' });
    await eventually(async () => (await senders(t)).length === 1);
    // The provider's form: no from, no contacts, the new id in system.user_id, the old one in the body.
    await inbound(t, { fromUserId: 'US.7004', previousUserId: 'US.7003' });
    const rows = await eventually(async () => {
      const r = await inbox(t);
      return r.length === 2 && r;
    });
    expect(rows[0]).toMatchObject({
      messageType: 'system',
      from: null,
      fromUserId: 'US.7004',
      system: { type: 'user_changed_user_id' },
    });
    expect(await senders(t)).toEqual([{ phone_e164: 'US.7004', inbound_count: 2 }]);
    const events = await eventually(async () => {
      const e = delivered(t, 'message.inbound');
      return e.length === 2 && e;
    });
    expect(events.map((e) => e.data.fromUserId).sort()).toEqual(['US.7003', 'US.7004']);

    // With the number shown (`from` and system.wa_id): the number stays the sender's key.
    await inbound(t, { from: '16505557005', fromUserId: 'US.7005' });
    await inbound(t, { from: '16505557005', fromUserId: 'US.7006', previousUserId: 'US.7005' });
    const after = await eventually(async () => {
      const r = await inbox(t);
      return r.length === 4 && r;
    });
    expect(after[0]).toMatchObject({ messageType: 'system', from: '+16505557005', fromUserId: 'US.7006' });
    expect(await senders(t)).toEqual([
      { phone_e164: '+16505557005', inbound_count: 2 },
      { phone_e164: 'US.7004', inbound_count: 2 },
    ]);
    const ids = await svc.db.query<{ user_id: string; phone_e164: string }>(
      'SELECT user_id, phone_e164 FROM sender_identities WHERE chat_account_id = $1 ORDER BY user_id',
      [t.accountIds[0]],
    );
    expect(ids).toEqual([{ user_id: 'US.7006', phone_e164: '+16505557005' }]);
  });

  it('an item that cannot be read as a message is kept as unsupported with its raw type, and counted', async () => {
    const t = await officialCustomer(svc.url, emu, { receiver: rx });
    const counted = (reason: string) => metricSum(svc.url, 'chatgate_inbound_unsupported_total', { reason });
    const [noSender, noId, noNumber] = [
      await counted('no_sender'),
      await counted('no_id'),
      await counted('no_phone_number_id'),
    ];
    const duplicates = () => metricSum(svc.url, 'chatgate_inbound_messages_total', { result: 'duplicate' });
    const duplicatesBefore = await duplicates();
    const ts = String(t0 + n++);
    const value = (metadata: Record<string, unknown>, messages: unknown[]) => ({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: t.wabaIds[0],
          changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata, messages } }],
        },
      ],
    });
    const body = JSON.stringify(
      value({ phone_number_id: t.phoneNumberIds[0] }, [
        // No sender at all: no from, no user id, no contacts.
        { id: 'wamid.nosender-1', timestamp: ts, type: 'text', text: { body: 'who am I' } },
        // No id.
        { from: '16505557010', timestamp: ts, type: 'location', location: { latitude: 1, longitude: 2 } },
      ]),
    );
    const post = (raw: string) =>
      call(svc.url, 'POST', '/provider/webhooks/app', {
        body: raw,
        headers: {
          'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', APP_SECRET).update(raw).digest('hex')}`,
        },
      });
    expect((await post(body)).status).toBe(200);
    const rows = await eventually(async () => {
      const r = await inbox(t);
      return r.length === 2 && r;
    });
    const byType = Object.fromEntries(rows.map((r) => [r.unsupported?.type, r]));
    expect(byType.text).toMatchObject({ messageType: 'unsupported', from: null, fromUserId: null, text: 'who am I' });
    expect(byType.location).toMatchObject({ messageType: 'unsupported', from: '+16505557010' });
    const events = await eventually(async () => {
      const e = delivered(t, 'message.inbound');
      return e.length === 2 && e;
    });
    expect(events.map((e) => e.data.messageType)).toEqual(['unsupported', 'unsupported']);
    expect(await counted('no_sender')).toBe(noSender + 1);
    expect(await counted('no_id')).toBe(noId + 1);
    // A retry of the same payload (the id-less item named by its bytes) stores nothing more.
    expect((await post(body)).status).toBe(200);
    expect(await duplicates()).toBe(duplicatesBefore + 2);
    expect(await inbox(t)).toHaveLength(2);
    // An item naming no business number has no account to be kept under: counted.
    const orphan = JSON.stringify(value({}, [{ id: 'wamid.orphan', timestamp: ts, type: 'text', from: '1650555' }]));
    expect((await post(orphan)).status).toBe(200);
    expect(await counted('no_phone_number_id')).toBe(noNumber + 1);
  });
});
