import crypto from 'node:crypto';
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { APP_SECRET, type Emulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';
import { metricSum } from './support/prometheus-text.js';

type Event = { type: string; data: Record<string, any> };

describe('inbound messages and the sender aggregate', () => {
  let svc: Service;
  let emu: Emulator;
  let n = 0;
  const wamid = () => `wamid.in${Date.now()}${n++}`;

  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
  });
  afterAll(() => stop());

  const customer = async (plan = 'pro', accounts = 1, defaultCountry = 'US') => {
    const c = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'In', plan, defaultCountry },
    });
    const phoneNumberIds: string[] = [];
    const accountIds: string[] = [];
    for (let i = 0; i < accounts; i++) {
      const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
      phoneNumberIds.push(pn);
      accountIds.push(
        await createAccount(svc.url, c.body.id, { official: { phoneNumberId: pn, wabaId: 'w', accessToken: 't' } }),
      );
    }
    return {
      customerId: c.body.id as string,
      phoneNumberIds,
      accountIds,
      key: await createKey(svc.url, c.body.id, {}),
      sandboxKey: await createKey(svc.url, c.body.id, { sandbox: true }),
    };
  };
  /** A signed provider webhook carrying inbound messages. */
  const deliver = async (
    phoneNumberId: string,
    messages: Record<string, unknown>[],
    contacts: Record<string, unknown>[] = [],
  ) => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'w',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: phoneNumberId },
                contacts,
                messages,
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
  };
  const textFrom = (from: string, text: string, extra: Record<string, unknown> = {}) => ({
    from,
    id: wamid(),
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: 'text',
    text: { body: text },
    ...extra,
  });
  const events = (customerId: string, type: string) =>
    svc.db.query<Event>(`SELECT type, data FROM events WHERE customer_id = $1 AND type = $2 ORDER BY created_at`, [
      customerId,
      type,
    ]);
  const sender = async (key: string, phone: string, query = '') =>
    await call(svc.url, 'GET', `/inbound-senders/${phone}${query}`, { key });

  it('records a sender through the emulator, found by every spelling of the number', async () => {
    const t = await customer('starter');
    await emu.state.sent.splice(0);
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], from: '16505551234', text: 'hi', name: 'Ann' }),
    });
    expect((await res.json()).delivered).toBe(true);
    for (const spelling of ['%2B16505551234', '+16505551234', '16505551234', '6505551234', '%2B1%20650%20555%201234']) {
      const s = await sender(t.key, spelling);
      expect(s.status, spelling).toBe(200);
      expect(s.body).toMatchObject({
        phoneE164: '+16505551234',
        chatAccountId: t.accountIds[0],
        hasWritten: true,
        inboundCount: 1,
        sandbox: false,
      });
      expect(s.body.firstInboundAt).toBe(s.body.lastInboundAt);
    }
    const never = await sender(t.key, '+16505550000');
    expect(never.body).toEqual({
      phoneE164: '+16505550000',
      chatAccountId: t.accountIds[0],
      hasWritten: false,
      firstInboundAt: null,
      lastInboundAt: null,
      inboundCount: 0,
      sandbox: false,
      optedOut: false,
      optedOutAt: null,
      replyWindowExpiresAt: null,
    });
    expect(await sender(t.key, 'not-a-number')).toMatchObject({
      status: 400,
      body: { error: 'validation_error', details: [{ path: 'phone' }] },
    });
  });

  it("counts each message once under provider retries, and emits first_inbound once with the API's firstInboundAt", async () => {
    const t = await customer('basic');
    const first = textFrom('447700900123', 'one');
    await deliver(t.phoneNumberIds[0]!, [first], [{ profile: { name: 'Bo' }, wa_id: '447700900123' }]);
    await deliver(t.phoneNumberIds[0]!, [first]); // the provider delivers it again
    await deliver(t.phoneNumberIds[0]!, [
      textFrom('447700900123', 'two', { timestamp: String(Math.floor(Date.now() / 1000) + 5) }),
    ]);
    const s = (await sender(t.key, '+447700900123')).body;
    expect(s).toMatchObject({ hasWritten: true, inboundCount: 2 });
    expect(Date.parse(s.lastInboundAt)).toBeGreaterThan(Date.parse(s.firstInboundAt));
    const inbound = await events(t.customerId, 'message.inbound');
    expect(inbound).toHaveLength(2);
    expect(inbound[0]!.data).toMatchObject({
      chatAccountId: t.accountIds[0],
      channel: 'chat_official',
      from: '+447700900123',
      fromDisplayName: 'Bo',
      messageType: 'text',
      text: 'one',
    });
    expect(Object.keys(inbound[0]!.data).sort()).toEqual([
      'channel',
      'chatAccountId',
      'from',
      'fromDisplayName',
      'fromUserId',
      'inboundMessageId',
      'messageType',
      'receivedAt',
      'text',
    ]);
    const firsts = await events(t.customerId, 'sender.first_inbound');
    expect(firsts).toHaveLength(1);
    expect(firsts[0]!.data).toEqual({
      chatAccountId: t.accountIds[0],
      channel: 'chat_official',
      from: '+447700900123',
      fromDisplayName: 'Bo',
      firstInboundAt: s.firstInboundAt,
      inboundMessageId: null,
    });
  });

  it('keeps one first_inbound and one firstInboundAt under concurrent first messages', async () => {
    const t = await customer('basic');
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => deliver(t.phoneNumberIds[0]!, [textFrom('33612345678', `m${i}`)])),
    );
    expect((await sender(t.key, '+33612345678')).body).toMatchObject({ hasWritten: true, inboundCount: 12 });
    expect(await events(t.customerId, 'sender.first_inbound')).toHaveLength(1);
    expect(await events(t.customerId, 'message.inbound')).toHaveLength(12);
  });

  it('resolves a hidden number from an earlier message that carried both, and keeps an id alone under the id', async () => {
    const t = await customer('basic');
    await deliver(t.phoneNumberIds[0]!, [textFrom('4915112345678', 'with number', { from_user_id: 'DE.123' })]);
    await deliver(t.phoneNumberIds[0]!, [
      {
        id: wamid(),
        from_user_id: 'DE.123',
        timestamp: String(Math.floor(Date.now() / 1000)),
        type: 'text',
        text: { body: 'hidden' },
      },
    ]);
    expect((await sender(t.key, '+4915112345678')).body.inboundCount).toBe(2);
    await deliver(
      t.phoneNumberIds[0]!,
      [
        {
          id: wamid(),
          from_user_id: 'DE.999',
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: 'unknown' },
        },
      ],
      [{ profile: { name: 'Hidden' }, user_id: 'DE.999' }],
    );
    const inbound = await events(t.customerId, 'message.inbound');
    expect(inbound.map((e) => e.data.from)).toEqual(['+4915112345678', '+4915112345678', null]);
    expect(inbound[2]!.data.fromDisplayName).toBe('Hidden');
    // The aggregate keeps the id-only sender under its id (the recipient key, decision 0036).
    const rows = await svc.db.query<{ phone_e164: string }>(
      'SELECT phone_e164 FROM senders WHERE customer_id = $1 ORDER BY phone_e164',
      [t.customerId],
    );
    expect(rows.map((r) => r.phone_e164)).toEqual(['+4915112345678', 'DE.999']);
  });

  it('reads bare digits that are a valid international number as that number, whatever the default country', async () => {
    // 4915112345678 is valid as +49 151 12345678 and, read as a German national number, as
    // +49 4915112345678: the international reading wins; 015112345678 is the national spelling.
    const t = await customer('pro', 1, 'DE');
    await deliver(t.phoneNumberIds[0]!, [textFrom('4915112345678', 'hallo')]);
    for (const spelling of [
      '%2B4915112345678',
      '+4915112345678',
      '4915112345678',
      '004915112345678',
      '015112345678',
      '0151%201234%205678',
      '15112345678',
    ]) {
      const s = await sender(t.key, spelling);
      expect(s.status, spelling).toBe(200);
      expect(s.body, spelling).toMatchObject({ phoneE164: '+4915112345678', hasWritten: true, inboundCount: 1 });
    }
    const lookup = await call(svc.url, 'POST', '/inbound-senders/lookup', {
      key: t.key,
      body: { phones: ['+4915112345678', '4915112345678', '015112345678'] },
    });
    expect(lookup.status).toBe(200);
    expect(lookup.body.senders).toEqual([
      expect.objectContaining({ phoneE164: '+4915112345678', chatAccountId: t.accountIds[0], hasWritten: true }),
    ]);
    for (const from of ['4915112345678', '015112345678', '%2B4915112345678']) {
      const inbox = await call(svc.url, 'GET', `/inbound-messages?from=${from}`, { key: t.key });
      expect(inbox.status, from).toBe(200);
      expect(
        inbox.body.inboundMessages.map((m: { from: string; text: string }) => [m.from, m.text]),
        from,
      ).toEqual([['+4915112345678', 'hallo']]);
    }
    const filter = await call(svc.url, 'PUT', `/chat-accounts/${t.accountIds[0]}/inbox-filter`, {
      key: t.key,
      body: { mode: 'blacklist', numbers: ['4915112345678', '015112345678', '+49 151 12345678'] },
    });
    expect(filter).toMatchObject({ status: 200, body: { numbers: ['+4915112345678'] } });
  });

  it('looks up 200 numbers at once, one entry per distinct number', async () => {
    const t = await customer('free');
    await deliver(t.phoneNumberIds[0]!, [textFrom('16505551200', 'x')]);
    const phones = Array.from({ length: 200 }, (_, i) => `+1650555${String(1100 + i).padStart(4, '0')}`);
    phones[199] = '6505551200'; // the same number as +16505551200, national spelling
    const res = await call(svc.url, 'POST', '/inbound-senders/lookup', { key: t.key, body: { phones } });
    expect(res.status).toBe(200);
    expect(res.body.senders).toHaveLength(199);
    expect(
      res.body.senders
        .filter((s: { hasWritten: boolean }) => s.hasWritten)
        .map((s: { phoneE164: string }) => s.phoneE164),
    ).toEqual(['+16505551200']);
    expect(
      await call(svc.url, 'POST', '/inbound-senders/lookup', {
        key: t.key,
        body: { phones: [...phones, '+16505550001'] },
      }),
    ).toMatchObject({ status: 400, body: { error: 'validation_error' } });
    const bad = await call(svc.url, 'POST', '/inbound-senders/lookup', {
      key: t.key,
      body: { phones: ['+16505551200', 'nope', '12'] },
    });
    expect(bad.body.details.map((d: { path: string }) => d.path)).toEqual(['phones.1', 'phones.2']);
  });

  it('resolves the account as the spec says, and keeps customers and accounts apart', async () => {
    const two = await customer('pro', 2);
    const other = await customer('pro');
    await deliver(two.phoneNumberIds[0]!, [textFrom('16505551300', 'to account 0')]);
    expect(await sender(two.key, '+16505551300')).toMatchObject({
      status: 422,
      body: { error: 'chat_account_required' },
    });
    expect((await sender(two.key, '+16505551300', `?chatAccountId=${two.accountIds[0]}`)).body.hasWritten).toBe(true);
    expect((await sender(two.key, '+16505551300', `?chatAccountId=${two.accountIds[1]}`)).body.hasWritten).toBe(false);
    expect(await sender(two.key, '+16505551300', `?chatAccountId=${other.accountIds[0]}`)).toMatchObject({
      status: 404,
      body: { error: 'account_not_found' },
    });
    expect((await sender(other.key, '+16505551300')).body.hasWritten).toBe(false);
    const scoped = await createKey(svc.url, two.customerId, { chatAccountId: two.accountIds[1] });
    expect((await sender(scoped, '+16505551300')).body).toMatchObject({
      chatAccountId: two.accountIds[1],
      hasWritten: false,
    });
    expect(await sender(scoped, '+16505551300', `?chatAccountId=${two.accountIds[0]}`)).toMatchObject({
      status: 403,
      body: { error: 'key_scope_violation' },
    });
  });

  it('simulates lookups for sandbox keys', async () => {
    const t = await customer('free');
    const wrote = (await sender(t.sandboxKey, '+16505551277')).body;
    expect(wrote).toMatchObject({ hasWritten: true, inboundCount: 3, sandbox: true, optedOut: false });
    expect(wrote.firstInboundAt).not.toBeNull();
    expect(Date.parse(wrote.replyWindowExpiresAt) - Date.parse(wrote.lastInboundAt)).toBe(86_400_000);
    expect((await sender(t.sandboxKey, '+16505551278')).body).toMatchObject({
      hasWritten: false,
      inboundCount: 0,
      sandbox: true,
      firstInboundAt: null,
    });
  });

  it('keeps an inbox on Pro with filters, cursors and replyTo; other plans get feature_not_available', async () => {
    const t = await customer('pro');
    const sent = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: 'ours-1',
        to: { type: 'phone', phoneE164: '+16505551400' },
        content: { type: 'text', text: 'hello' },
      },
    });
    const ours = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${sent.body.messageId}`, { key: t.key })).body;
      return m.providerMessageId ? m : undefined;
    });
    await deliver(t.phoneNumberIds[0]!, [textFrom('16505551400', 'first')]);
    await deliver(t.phoneNumberIds[0]!, [
      textFrom('16505551400', 'a reply', {
        context: { from: '15550100200', id: ours.providerMessageId },
        timestamp: String(Math.floor(Date.now() / 1000) + 1),
      }),
    ]);
    await deliver(t.phoneNumberIds[0]!, [
      {
        from: '16505551401',
        id: wamid(),
        timestamp: String(Math.floor(Date.now() / 1000) + 2),
        type: 'image',
        image: { id: '1', caption: 'look' },
      },
    ]);
    const page1 = await call(svc.url, 'GET', '/inbound-messages?limit=2', { key: t.key });
    expect(page1.status).toBe(200);
    expect(page1.body.inboundMessages.map((m: { text: string }) => m.text)).toEqual(['look', 'a reply']);
    expect(page1.body.inboundMessages[0]).toMatchObject({
      messageType: 'image',
      from: '+16505551401',
      replyTo: null,
      channel: 'chat_official',
    });
    expect(page1.body.inboundMessages[1].replyTo).toEqual({
      providerMessageId: ours.providerMessageId,
      messageId: ours.messageId,
      externalId: 'ours-1',
    });
    // The event carries replyTo only for a reply, resolved to our ids.
    const inboundEvents = await events(t.customerId, 'message.inbound');
    expect(inboundEvents.find((e) => e.data.text === 'a reply')!.data.replyTo).toEqual({
      providerMessageId: ours.providerMessageId,
      messageId: ours.messageId,
      externalId: 'ours-1',
    });
    expect('replyTo' in inboundEvents.find((e) => e.data.text === 'first')!.data).toBe(false);
    const page2 = await call(svc.url, 'GET', `/inbound-messages?limit=2&cursor=${page1.body.nextCursor}`, {
      key: t.key,
    });
    expect(page2.body).toMatchObject({ inboundMessages: [{ text: 'first' }], nextCursor: null });
    expect(
      (await call(svc.url, 'GET', '/inbound-messages?from=6505551401', { key: t.key })).body.inboundMessages,
    ).toHaveLength(1);
    expect(
      (await call(svc.url, 'GET', '/inbound-messages?since=2100-01-01T00:00:00Z', { key: t.key })).body.inboundMessages,
    ).toEqual([]);
    expect(await call(svc.url, 'GET', '/inbound-messages?cursor=zzz', { key: t.key })).toMatchObject({
      status: 400,
      body: { error: 'invalid_cursor' },
    });
    expect((await call(svc.url, 'GET', '/inbound-messages', { key: t.sandboxKey })).body).toEqual({
      inboundMessages: [],
      nextCursor: null,
    });
    const basic = await customer('basic');
    expect(await call(svc.url, 'GET', '/inbound-messages', { key: basic.key })).toMatchObject({
      status: 403,
      body: { error: 'feature_not_available', plan: 'basic' },
    });
    // Another customer's inbox, and another account of the same customer, show none of these.
    const stranger = await customer('pro');
    expect((await call(svc.url, 'GET', '/inbound-messages', { key: stranger.key })).body.inboundMessages).toEqual([]);
    expect(
      await call(svc.url, 'GET', `/inbound-messages?chatAccountId=${stranger.accountIds[0]}`, { key: t.key }),
    ).toMatchObject({ status: 404, body: { error: 'account_not_found' } });
    const second = await createAccount(svc.url, t.customerId, {
      official: { phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`, wabaId: 'w', accessToken: 't' },
    });
    expect(
      (await call(svc.url, 'GET', `/inbound-messages?chatAccountId=${second}`, { key: t.key })).body.inboundMessages,
    ).toEqual([]);
    expect(
      (await call(svc.url, 'GET', `/inbound-messages?chatAccountId=${t.accountIds[0]}`, { key: t.key })).body
        .inboundMessages,
    ).toHaveLength(3);
  });

  it('filters the inbox by whitelist or blacklist while the aggregate still counts', async () => {
    const t = await customer('pro');
    const set = await call(svc.url, 'PUT', `/chat-accounts/${t.accountIds[0]}/inbox-filter`, {
      key: t.key,
      body: { mode: 'blacklist', numbers: ['6505551500'] },
    });
    expect(set).toMatchObject({ status: 200, body: { mode: 'blacklist', numbers: ['+16505551500'] } });
    expect((await call(svc.url, 'GET', `/chat-accounts/${t.accountIds[0]}/inbox-filter`, { key: t.key })).body).toEqual(
      { chatAccountId: t.accountIds[0], mode: 'blacklist', numbers: ['+16505551500'] },
    );
    await deliver(t.phoneNumberIds[0]!, [textFrom('16505551500', 'blocked'), textFrom('16505551501', 'allowed')]);
    expect(
      (await call(svc.url, 'GET', '/inbound-messages', { key: t.key })).body.inboundMessages.map(
        (m: { text: string }) => m.text,
      ),
    ).toEqual(['allowed']);
    expect((await sender(t.key, '+16505551500')).body).toMatchObject({ hasWritten: true, inboundCount: 1 });
    const firsts = await events(t.customerId, 'sender.first_inbound');
    expect(firsts.find((e) => e.data.from === '+16505551500')!.data.inboundMessageId).toBeNull();
    expect(firsts.find((e) => e.data.from === '+16505551501')!.data.inboundMessageId).toEqual(expect.any(String));
    await call(svc.url, 'PUT', `/chat-accounts/${t.accountIds[0]}/inbox-filter`, {
      key: t.key,
      body: { mode: 'whitelist', numbers: ['+16505551502'] },
    });
    await deliver(t.phoneNumberIds[0]!, [
      textFrom('16505551501', 'now filtered'),
      textFrom('16505551502', 'listed', { timestamp: String(Math.floor(Date.now() / 1000) + 5) }),
    ]);
    expect(
      (await call(svc.url, 'GET', '/inbound-messages', { key: t.key })).body.inboundMessages.map(
        (m: { text: string }) => m.text,
      ),
    ).toEqual(['listed', 'allowed']);
    expect(
      await call(svc.url, 'PUT', `/chat-accounts/${t.accountIds[0]}/inbox-filter`, {
        key: t.key,
        body: { mode: 'whitelist', numbers: ['x'] },
      }),
    ).toMatchObject({ status: 400, body: { details: [{ path: 'numbers.0' }] } });
  });

  it("forwards matching messages once to a rule's URL, with the rule id", async () => {
    const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          got.push({ headers: req.headers, body });
          res.writeHead(204).end();
        });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/forward`;
    try {
      const t = await customer('pro');
      const rule = await call(svc.url, 'POST', '/forwarding-rules', {
        key: t.key,
        body: {
          name: 'orders',
          condition: { type: 'regex', pattern: 'order #\\d+' },
          destination: { type: 'http', url },
        },
      });
      expect(rule.status).toBe(201);
      expect(rule.body).toMatchObject({
        condition: { type: 'regex', pattern: 'order #\\d+', caseSensitive: false },
        destination: { type: 'http', url },
        isActive: true,
      });
      await call(svc.url, 'POST', '/forwarding-rules', {
        key: t.key,
        body: { condition: { type: 'starts_with', pattern: 'zzz' }, destination: { type: 'http', url } },
      });
      const forwardingDone = (labels: Record<string, string> = {}) =>
        metricSum(svc.url, 'chatgate_inbound_forwarding_total', labels);
      const [before, forwarded] = [await forwardingDone(), await forwardingDone({ result: 'forwarded' })];
      await deliver(t.phoneNumberIds[0]!, [
        textFrom('16505551600', 'About ORDER #42 please'),
        textFrom('16505551600', 'nothing here'),
      ]);
      await eventually(async () => got.length >= 1);
      // Both messages' forwarding finished (every matched rule's request made): nothing more will come.
      await eventually(
        async () =>
          (await forwardingDone()) >= before + 2 && (await forwardingDone({ result: 'forwarded' })) >= forwarded + 1,
      );
      expect(got).toHaveLength(1);
      expect(await forwardingDone({ result: 'forwarded' })).toBe(forwarded + 1);
      expect(got[0]!.headers['x-svc-forward-rule']).toBe(rule.body.id);
      expect(JSON.parse(got[0]!.body)).toMatchObject({
        from: '+16505551600',
        text: 'About ORDER #42 please',
        messageType: 'text',
        chatAccountId: t.accountIds[0],
      });
      expect(got[0]!.headers['x-svc-signature']).toBeUndefined();
      expect(
        await call(svc.url, 'POST', '/forwarding-rules', {
          key: t.key,
          body: { condition: { type: 'regex', pattern: '(?<=x)' }, destination: { type: 'http', url } },
        }),
      ).toMatchObject({ status: 400, body: { details: [{ path: 'condition.pattern' }] } });
      expect((await call(svc.url, 'GET', '/forwarding-rules', { key: t.key })).body.forwardingRules).toHaveLength(2);
      expect((await call(svc.url, 'DELETE', `/forwarding-rules/${rule.body.id}`, { key: t.key })).status).toBe(204);
      expect(await call(svc.url, 'GET', `/forwarding-rules/${rule.body.id}`, { key: t.key })).toMatchObject({
        status: 404,
        body: { error: 'forwarding_rule_not_found' },
      });
      const basic = await customer('basic');
      expect(await call(svc.url, 'GET', '/forwarding-rules', { key: basic.key })).toMatchObject({
        status: 403,
        body: { error: 'feature_not_available', plan: 'basic' },
      });
    } finally {
      receiver.close();
    }
  });

  it("ingests a DIRECT account's messages from its connector through the operator API", async () => {
    const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Direct', plan: 'basic' } });
    const accountId = await createAccount(svc.url, c.body.id, { type: 'DIRECT', official: undefined });
    const key = await createKey(svc.url, c.body.id, {});
    const body = { providerMessageId: 'direct-1', from: '+16505551700', fromDisplayName: 'Dee', text: 'hello direct' };
    expect(
      await call(svc.url, 'POST', `/admin/chat-accounts/${accountId}/inbound`, { admin: true, body }),
    ).toMatchObject({ status: 202, body: { ingested: true, duplicate: false } });
    expect(
      await call(svc.url, 'POST', `/admin/chat-accounts/${accountId}/inbound`, { admin: true, body }),
    ).toMatchObject({ status: 202, body: { ingested: false, duplicate: true } });
    expect((await sender(key, '+16505551700')).body).toMatchObject({ hasWritten: true, inboundCount: 1 });
    const [ev] = await events(c.body.id, 'message.inbound');
    expect(ev!.data).toMatchObject({ channel: 'chat_direct', from: '+16505551700', text: 'hello direct' });
  });
});
