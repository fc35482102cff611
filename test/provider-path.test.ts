import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { insertBatch } from '../src/messages/insert-batch.js';
import {
  APP_SECRET,
  type Emulator,
  maxPerSecond,
  type ProcessEmulator,
  providerEnv,
  resetEmulator,
  spawnEmulator,
  startEmulator,
  startLiveService,
  VERIFY_TOKEN,
} from './support/emulator.js';
import {
  call,
  createAccount,
  createKey,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';
import { metricSum } from './support/prometheus-text.js';

type Event = { type: string; data: Record<string, any> };

describe('live sends through the provider emulator', () => {
  let emu: Emulator;
  let svc: Service;
  let n = 0;
  const ext = () => `live-${n++}`;

  let stop: () => Promise<void>;

  beforeAll(async () => {
    // A pair-rate refusal paces its recipient (decision 0037): short here, so retries stay quick.
    ({ emu, svc, stop } = await startLiveService({ PAIR_RATE_SPACING_MS: '20' }));
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const tenant = async (account: Record<string, unknown> = {}) => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Live', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-live-token' },
      ...account,
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      key: await createKey(svc.url, customer.body.id, {}),
    };
  };
  const send = async (key: string, body: Record<string, unknown>) => {
    const res = await call(svc.url, 'POST', '/messages', { key, body });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const message = async (key: string, id: string) => (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
  const waitStatus = (key: string, id: string, status: string, timeoutMs = 15_000) =>
    eventually(async () => {
      const m = await message(key, id);
      return m.status === status ? m : undefined;
    }, timeoutMs);
  const events = (id: string) =>
    svc.db.query<Event>(`SELECT type, data FROM events WHERE data->>'messageId' = $1 ORDER BY created_at`, [id]);
  const sentTo = (phoneNumberId: string) => emu.sent().filter((s) => s.phoneNumberId === phoneNumberId);
  /** Provider receipts the service has decided on (applied, ignored, parked, …). */
  const receiptsDecided = () => metricSum(svc.url, 'chatgate_receipts_total');

  it('sends text with the bearer token and our messageId, then follows the receipts', async () => {
    const t = await tenant();
    const id = await send(t.key, textMessage(ext(), { to: { type: 'phone', phoneE164: '+15551230001' } }));
    const m = await waitStatus(t.key, id, 'delivered');
    expect(m).toMatchObject({ attemptCount: 1, error: null, lastErrorCode: null });
    expect(m.providerMessageId).toMatch(/^wamid\./);
    const [record] = sentTo(t.phoneNumberId);
    expect(record).toMatchObject({ to: '15551230001', type: 'text', messageId: id, wamid: m.providerMessageId });
    expect(emu.state.sent.find((s) => s.messageId === id)!.payload).toMatchObject({
      messaging_product: 'whatsapp',
      to: '15551230001',
      type: 'text',
      text: { body: 'hello' },
      biz_opaque_callback_data: id,
    });
    const ev = await events(id);
    expect(ev.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['queued', 'sent'],
      ['sent', 'delivered'],
    ]);
  });

  it('sends templates with positional header and body values', async () => {
    const t = await tenant();
    const id = await send(t.key, {
      ...textMessage(ext()),
      content: {
        type: 'template',
        template: { name: 'order_update', language: 'en_US', components: { header: ['#42'], body: ['Ann', 'Friday'] } },
      },
    });
    await waitStatus(t.key, id, 'delivered');
    expect(emu.state.sent.find((s) => s.messageId === id)!.payload.template).toEqual({
      name: 'order_update',
      language: { code: 'en_US' },
      components: [
        { type: 'header', parameters: [{ type: 'text', text: '#42' }] },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Ann' },
            { type: 'text', text: 'Friday' },
          ],
        },
      ],
    });
  });

  it('fails at once on a permanent error, with a sanitized provider detail', async () => {
    const t = await tenant();
    await emu.rule({
      phoneNumberId: t.phoneNumberId,
      error: { code: 131026, message: 'Message undeliverable' },
      httpStatus: 400,
    });
    const id = await send(t.key, textMessage(ext()));
    const m = await waitStatus(t.key, id, 'failed');
    expect(m).toMatchObject({ attemptCount: 1, lastErrorCode: 'UNDELIVERABLE' });
    expect(m.error).toMatchObject({
      code: 'UNDELIVERABLE',
      provider: { code: 131026, subcode: null, source: 'send_attempt', fbtraceId: expect.stringMatching(/^Emu/) },
    });
    expect(JSON.stringify(m)).not.toContain('EAAG-live-token');
    const [ev] = await events(id);
    expect(ev!.data.error).toEqual({
      code: 'UNDELIVERABLE',
      message: m.error.message,
      provider: {
        code: 131026,
        subcode: null,
        message: m.error.provider.message,
        fbtraceId: m.error.provider.fbtraceId,
      },
    });
  });

  // A timeout is not retried: the send may have reached the provider (decision 0061, test/send-once.test.ts).
  it('retries transient failures (5xx, rate limit) and then succeeds', async () => {
    const t = await tenant();
    await emu.rule({ phoneNumberId: t.phoneNumberId, httpStatus: 503, times: 1 });
    await emu.rule({
      phoneNumberId: t.phoneNumberId,
      error: { code: 130429, message: 'Rate limit hit' },
      httpStatus: 400,
      times: 1,
    });
    const id = await send(t.key, textMessage(ext()));
    const m = await waitStatus(t.key, id, 'delivered', 40_000);
    expect(m.attemptCount).toBe(3);
    expect(m.error).toBeNull();
    expect(m.lastErrorCode).toBe('PROVIDER_RATE_LIMITED');
    expect(m.processing).toMatchObject({ attemptCount: 3, maxAttempts: 5, nextAttemptAt: null, queueState: 'done' });
    expect((await events(id)).map((e) => e.data.status)).toEqual(['sent', 'delivered']);
  });

  it('fails after 5 attempts when the provider stays down', async () => {
    const t = await tenant();
    await emu.rule({
      phoneNumberId: t.phoneNumberId,
      error: { code: 131000, message: 'Something went wrong' },
      httpStatus: 500,
    });
    const id = await send(t.key, textMessage(ext()));
    const m = await waitStatus(t.key, id, 'failed');
    expect(m).toMatchObject({ attemptCount: 5, lastErrorCode: 'PROVIDER_UNAVAILABLE' });
    expect(sentTo(t.phoneNumberId)).toHaveLength(0);
    expect((await events(id)).map((e) => e.data.status)).toEqual(['failed']);
  });

  it('marks the account on a rejected token and fails its other messages without calling', async () => {
    const t = await tenant();
    await emu.number(t.phoneNumberId, { accessToken: 'the-right-token' });
    const first = await send(t.key, textMessage(ext()));
    expect(await waitStatus(t.key, first, 'failed')).toMatchObject({
      attemptCount: 1,
      lastErrorCode: 'AUTH_REJECTED',
      error: { code: 'AUTH_REJECTED', provider: { code: 190 } },
    });
    const account = (await call(svc.url, 'GET', '/chat-accounts', { key: t.key })).body.accounts[0];
    expect(account).toMatchObject({ status: 'ERROR', lastErrorCode: 'AUTH_REJECTED' });
    const second = await send(t.key, textMessage(ext()));
    expect(await waitStatus(t.key, second, 'failed')).toMatchObject({
      attemptCount: 0,
      lastErrorCode: 'AUTH_REJECTED',
    });
    // The operator fixes the token and reconnects: sending works again.
    await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
      admin: true,
      body: { status: 'CONNECTED', lastErrorCode: null, official: { accessToken: 'the-right-token' } },
    });
    const third = await send(t.key, textMessage(ext()));
    await waitStatus(t.key, third, 'delivered');
  });

  it("sends with the operator's new token at once after a token change (unsealed tokens are cached by sealed value)", async () => {
    const t = await tenant();
    await emu.number(t.phoneNumberId, { accessToken: 'EAAG-live-token' });
    const before = await send(t.key, textMessage(ext()));
    await waitStatus(t.key, before, 'delivered');
    // The token is rotated at the provider and by the operator: the old one is refused from now on.
    await emu.number(t.phoneNumberId, { accessToken: 'EAAG-rotated-token' });
    const edit = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
      admin: true,
      body: { official: { accessToken: 'EAAG-rotated-token' } },
    });
    expect(edit.status).toBe(200);
    const after = await send(t.key, textMessage(ext()));
    expect(await waitStatus(t.key, after, 'delivered')).toMatchObject({ attemptCount: 1, lastErrorCode: null });
    expect(sentTo(t.phoneNumberId).map((r) => r.messageId)).toEqual([before, after]);
  });

  it('books a send whose timer fired late again under its claim, rather than returning it to the queue', async () => {
    const lateSends = async (outcome: string) => {
      const text = await (await fetch(`${svc.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`chatgate_dispatch_late_sends_total{outcome="${outcome}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = { rebooked: await lateSends('rebooked'), returned: await lateSends('returned') };
    // 3 slots a second: the sends of one booking are a third of a second apart.
    const t = await tenant({ throughputMps: 4 });
    const ids = await Promise.all([1, 2, 3, 4].map(() => send(t.key, textMessage(ext()))));
    // Once some of them are booked with slots still ahead, this process (the service's too) is
    // kept busy past those slots: their timers fire late.
    await eventually(
      async () => {
        const [row] = await svc.db.query<{ ahead: boolean }>(
          `SELECT next_slot_at > now() + interval '500 milliseconds' AS ahead FROM account_pacing WHERE account_id = $1`,
          [t.accountId],
        );
        return row?.ahead === true || undefined;
      },
      15_000,
      5,
    );
    const busyUntil = Date.now() + 1200;
    while (Date.now() < busyUntil);
    for (const id of ids) expect(await waitStatus(t.key, id, 'delivered')).toMatchObject({ attemptCount: 1 });
    expect(
      sentTo(t.phoneNumberId)
        .map((r) => r.messageId)
        .sort(),
    ).toEqual([...ids].sort());
    expect(await lateSends('rebooked')).toBeGreaterThan(before.rebooked);
    expect(await lateSends('returned')).toBe(before.returned);
  });

  it('does not fire sends already booked for an account that was just marked unusable', async () => {
    const t = await tenant({ throughputMps: 2 });
    await emu.number(t.phoneNumberId, { accessToken: 'another-token' });
    const [keyRow] = await svc.db.query<{ id: string }>('SELECT id FROM api_keys WHERE customer_id = $1', [
      t.customerId,
    ]);
    const now = new Date();
    await insertBatch(
      svc.db,
      Array.from({ length: 4 }, (_, i) => ({
        id: crypto.randomUUID(),
        customerId: t.customerId,
        chatAccountId: t.accountId,
        apiKeyId: keyRow!.id,
        externalId: `booked-${i}`,
        payloadHash: 'h',
        recipient: '+15551230000',
        channel: 'chat_official',
        contentJson: JSON.stringify({ type: 'text', text: 'hi' }),
        metadataJson: null,
        sandbox: false,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 86400_000),
        maxAttempts: 5,
        mediaId: null,
        quotaLimit: 20000,
      })),
    );
    const rows = await eventually(async () => {
      const r = await svc.db.query<{ status: string; attempt_count: number; last_error_code: string }>(
        `SELECT status, attempt_count, last_error_code FROM messages WHERE chat_account_id = $1 ORDER BY attempt_count DESC`,
        [t.accountId],
      );
      return r.every((m) => m.status === 'failed') ? r : undefined;
    });
    // One send met the rejected token; the three booked after it never left.
    expect(rows.map((r) => [r.attempt_count, r.last_error_code])).toEqual([
      [1, 'AUTH_REJECTED'],
      [0, 'AUTH_REJECTED'],
      [0, 'AUTH_REJECTED'],
      [0, 'AUTH_REJECTED'],
    ]);
  });

  it('backs off one recipient on the pair-rate error', async () => {
    const t = await tenant();
    await emu.rule({
      phoneNumberId: t.phoneNumberId,
      to: '15551239999',
      error: { code: 131056, message: 'pair rate limit hit' },
      httpStatus: 400,
      times: 2,
    });
    const limited = await send(t.key, textMessage(ext(), { to: { type: 'phone', phoneE164: '+15551239999' } }));
    const other = await send(t.key, textMessage(ext(), { to: { type: 'phone', phoneE164: '+15551230002' } }));
    expect(await waitStatus(t.key, other, 'delivered')).toMatchObject({ attemptCount: 1 });
    expect(await waitStatus(t.key, limited, 'delivered')).toMatchObject({
      attemptCount: 3,
      lastErrorCode: 'RECIPIENT_RATE_LIMITED',
    });
  });

  describe('send policies', () => {
    it('DISABLED sends nothing', async () => {
      const t = await tenant({ sendPolicy: { mode: 'DISABLED' } });
      const id = await send(t.key, textMessage(ext()));
      expect(await waitStatus(t.key, id, 'failed')).toMatchObject({ attemptCount: 0, lastErrorCode: 'SEND_DISABLED' });
      expect(sentTo(t.phoneNumberId)).toHaveLength(0);
    });
    it('TEST sends only to test recipients', async () => {
      const t = await tenant({ sendPolicy: { mode: 'TEST', testRecipients: ['+15551110000'] } });
      const ok = await send(t.key, textMessage(ext(), { to: { type: 'phone', phoneE164: '+15551110000' } }));
      const blocked = await send(t.key, textMessage(ext(), { to: { type: 'phone', phoneE164: '+15551110001' } }));
      await waitStatus(t.key, ok, 'delivered');
      expect(await waitStatus(t.key, blocked, 'failed')).toMatchObject({
        lastErrorCode: 'SANDBOX_BLOCKED',
        error: { code: 'SANDBOX_BLOCKED' },
      });
      expect(sentTo(t.phoneNumberId).map((s) => s.to)).toEqual(['15551110000']);
    });
    it.each(['PRODUCTION', 'GLOBAL'])('%s sends to anyone', async (mode) => {
      const t = await tenant({ sendPolicy: { mode } });
      await waitStatus(t.key, await send(t.key, textMessage(ext())), 'delivered');
    });
  });

  describe('receipts', () => {
    it('applies out-of-order, duplicated and batched receipts once each, never backwards', async () => {
      const t = await tenant();
      await emu.settings({ statuses: ['sent', 'delivered', 'read'], order: 'reverse', duplicates: 2, batch: true });
      const before = await receiptsDecided();
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'read');
      // All nine receipts (three statuses, each posted three times) decided, none still to come.
      await eventually(async () => (await receiptsDecided()) >= before + 9);
      expect((await message(t.key, id)).status).toBe('read');
      expect(m.sentAt).not.toBeNull();
      expect(m.deliveredAt).not.toBeNull();
      expect((await events(id)).map((e) => e.data.status)).toEqual(['sent', 'delivered', 'read']);
    });

    it('applies receipts that arrive before the send answer was saved', async () => {
      const t = await tenant();
      await emu.settings({ statuses: ['sent', 'delivered'], beforeResponse: true, delayMs: 0 });
      const withId = await send(t.key, textMessage(ext()));
      await waitStatus(t.key, withId, 'delivered');
      await emu.settings({ omitCallbackData: true });
      const byWamidOnly = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, byWamidOnly, 'delivered');
      expect(m.providerMessageId).toMatch(/^wamid\./);
      for (const id of [withId, byWamidOnly])
        expect((await events(id)).map((e) => e.data.status)).toEqual(['sent', 'delivered']);
      const [row] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM pending_receipts');
      expect(row!.n).toBe(0);
    });

    it("clears an earlier attempt's error when the receipts of the retry that worked beat its answer", async () => {
      const t = await tenant();
      await emu.rule({
        phoneNumberId: t.phoneNumberId,
        httpStatus: 500,
        error: { code: 131000, message: 'Something went wrong' },
        times: 1,
      });
      await emu.settings({ statuses: ['sent', 'delivered'], beforeResponse: true, delayMs: 0 });
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'delivered');
      expect(m).toMatchObject({ error: null, lastErrorCode: 'PROVIDER_UNAVAILABLE' });
    });

    it('records a failed receipt with source status_webhook', async () => {
      const t = await tenant();
      await emu.rule({
        phoneNumberId: t.phoneNumberId,
        asyncFailure: { code: 131047, title: 'Re-engagement message' },
      });
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'failed');
      expect(m.error).toMatchObject({
        code: 'REENGAGEMENT_REQUIRED',
        provider: { code: 131047, source: 'status_webhook' },
      });
      expect((await events(id)).map((e) => [e.data.previousStatus, e.data.status])).toEqual([
        ['queued', 'sent'],
        ['sent', 'failed'],
      ]);
    });

    it('refuses a bad signature without touching state', async () => {
      const t = await tenant();
      await emu.settings({ enabled: false });
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'sent');
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'w1',
            changes: [
              {
                field: 'messages',
                value: {
                  metadata: { phone_number_id: t.phoneNumberId },
                  statuses: [
                    { id: m.providerMessageId, status: 'read', timestamp: '1790000000', recipient_id: '15551230000' },
                  ],
                },
              },
            ],
          },
        ],
      });
      const sign = (secret: string) => `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
      for (const signature of [
        undefined,
        'sha256=00',
        sign('wrong-secret'),
        sign(APP_SECRET).replace('sha256=', 'sha1='),
      ]) {
        const res = await call(svc.url, 'POST', '/provider/webhooks/app', {
          body,
          headers: signature ? { 'x-hub-signature-256': signature } : {},
        });
        expect(res).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
      }
      expect((await message(t.key, id)).status).toBe('sent');
      const ok = await call(svc.url, 'POST', '/provider/webhooks/app', {
        body,
        headers: { 'x-hub-signature-256': sign(APP_SECRET) },
      });
      expect(ok.status).toBe(200);
      expect(await message(t.key, id)).toMatchObject({
        status: 'read',
        readAt: '2026-09-21T14:13:20.000Z',
        deliveredAt: '2026-09-21T14:13:20.000Z',
      });
    });

    it('processes each status of a batch on its own', async () => {
      const t = await tenant();
      await emu.settings({ enabled: false });
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'sent');
      const statuses = [
        { id: 'wamid.unknown', status: 'delivered', timestamp: '1790000000' },
        { status: 'delivered' },
        { id: m.providerMessageId, status: 'bogus', timestamp: '1790000000' },
        { id: m.providerMessageId, status: 'delivered', timestamp: '1790000001' },
      ];
      const body = JSON.stringify({
        entry: [
          {
            changes: [
              { value: { metadata: { phone_number_id: 'someone-else' }, statuses } },
              { value: { metadata: { phone_number_id: t.phoneNumberId }, statuses } },
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
      expect((await message(t.key, id)).status).toBe('delivered');
    });

    it("routes an integration's receipts with its own secret, and only to its own accounts", async () => {
      const t = await tenant({
        official: {
          phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
          wabaId: 'w',
          accessToken: 'tok',
          integrationId: 'int-7',
          appSecret: 'integration-secret-7',
        },
      });
      const shared = await tenant();
      await emu.settings({ enabled: false });
      const id = await send(t.key, textMessage(ext()));
      const m = await waitStatus(t.key, id, 'sent');
      const other = await waitStatus(shared.key, await send(shared.key, textMessage(ext())), 'sent');
      const phoneNumberId = (await call(svc.url, 'GET', '/chat-accounts', { key: t.key })).body.accounts[0].official
        .phoneNumberId;
      const receipt = (pn: string, wamid: string) =>
        JSON.stringify({
          entry: [
            {
              changes: [
                {
                  value: {
                    metadata: { phone_number_id: pn },
                    statuses: [{ id: wamid, status: 'delivered', timestamp: '1790000000' }],
                  },
                },
              ],
            },
          ],
        });
      const post = (path: string, body: string, secret: string) =>
        call(svc.url, 'POST', path, {
          body,
          headers: {
            'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`,
          },
        });
      expect(
        (await post('/provider/webhooks/integrations/int-7', receipt(phoneNumberId, m.providerMessageId), APP_SECRET))
          .status,
      ).toBe(401);
      expect(
        (
          await post(
            '/provider/webhooks/integrations/int-7',
            receipt(phoneNumberId, m.providerMessageId),
            'integration-secret-7',
          )
        ).status,
      ).toBe(200);
      expect((await message(t.key, id)).status).toBe('delivered');
      // The shared app's account cannot be reached through the integration's callback, nor the reverse.
      expect(
        (
          await post(
            '/provider/webhooks/integrations/int-7',
            receipt(shared.phoneNumberId, other.providerMessageId),
            'integration-secret-7',
          )
        ).status,
      ).toBe(200);
      expect((await message(shared.key, other.messageId)).status).toBe('sent');
      const again = receipt(phoneNumberId, m.providerMessageId).replace('delivered', 'read');
      expect((await post('/provider/webhooks/app', again, APP_SECRET)).status).toBe(200);
      expect((await message(t.key, id)).status).toBe('delivered');
    });

    it('answers the verification handshake', async () => {
      const ok = await fetch(
        `${svc.url}/provider/webhooks/app?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`,
      );
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toContain('text/plain');
      expect(await ok.text()).toBe('1158201444');
      const wrong = await fetch(
        `${svc.url}/provider/webhooks/integrations/int-9?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`,
      );
      expect(wrong.status).toBe(403);
      const mode = await fetch(
        `${svc.url}/provider/webhooks/app?hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
      );
      expect(mode.status).toBe(403);
    });
  });
});

describe('pacing, timed by an emulator in a process of its own', () => {
  let emu: ProcessEmulator;
  let svc: Service;
  beforeAll(async () => {
    emu = await spawnEmulator();
    await emu.settings({ enabled: false });
    svc = await startService({ env: { ...providerEnv(emu), WORKER_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await svc?.stop();
    await emu?.stop();
  });

  it('paces an account at its throughput', async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Pace', plan: 'pro' },
    });
    const customerId = customer.body.id as string;
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customerId, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-live-token' },
      throughputMps: 20,
    });
    await createKey(svc.url, customerId, {});
    // The emulator refuses (130429) above 21 a second: the cap and one message of tolerance for the
    // sender's timer jitter (the dispatcher books 19 a second, so a real excess shows as more).
    await emu.number(phoneNumberId, { throughputMps: 21 });
    // Queue all 50 in one batch (the send path's own insert), so that the API's work does not
    // share the event loop with the dispatch being measured.
    const [apiKey] = await svc.db.query<{ id: string }>('SELECT id FROM api_keys WHERE customer_id = $1', [customerId]);
    const now = new Date();
    const outcomes = await insertBatch(
      svc.db,
      Array.from({ length: 50 }, (_, i) => ({
        id: crypto.randomUUID(),
        customerId,
        chatAccountId: accountId,
        apiKeyId: apiKey!.id,
        externalId: `pace-${i}`,
        payloadHash: 'h',
        recipient: '+15551230000',
        channel: 'chat_official',
        contentJson: JSON.stringify({ type: 'text', text: 'hi' }),
        metadataJson: null,
        sandbox: false,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 86400_000),
        maxAttempts: 5,
        mediaId: null,
        quotaLimit: 20000,
      })),
    );
    expect(outcomes.every((o) => o.kind === 'created')).toBe(true);
    const sentTo = async () => (await emu.sent()).filter((x) => x.phoneNumberId === phoneNumberId);
    await eventually(async () => (await sentTo()).length === 50, 60_000, 200);
    const sent = await sentTo();
    expect(new Set(sent.map((x) => x.messageId)).size).toBe(50);
    // Every arrival counts, those refused with 130429 too, timed in the emulator's own clock.
    const throttled = (await emu.throttled()).filter((x) => x.phoneNumberId === phoneNumberId);
    const arrivals = [...sent, ...throttled].map((x) => x.at).sort((a, b) => a - b);
    expect(maxPerSecond(arrivals)).toBeLessThanOrEqual(21);
    expect(throttled).toEqual([]);
    // The whole run at the cap's rate or below: 50 sends span at least 47 intervals at 20 a second
    // (49 booked at 19 a second, less one interval of jitter at either end).
    expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThanOrEqual((47 / 20) * 1000);
  });
});

describe('a backlog paced over more than a lease', () => {
  let emu: Emulator;
  let svc: Service;
  beforeAll(async () => {
    emu = await startEmulator();
    svc = await startService({
      // A 3 s lease allows at most a 1 s provider timeout (the largest: fewer timeouts, fewer retries).
      env: { ...providerEnv(emu), WORKER_LEASE_SECONDS: '3', PROVIDER_TIMEOUT_MS: '1000', WORKER_POLL_MS: '50' },
    });
    await emu.settings({ enabled: false });
  });
  afterAll(async () => {
    await svc.stop();
    await emu.stop();
  });

  it('books no slot past the lease, so no message is sent twice; shutdown does not wait for booked slots', async () => {
    const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Slow', plan: 'pro' } });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, c.body.id, {
      official: { phoneNumberId, wabaId: 'w', accessToken: 't' },
      throughputMps: 10,
    });
    const apiKey = await createKey(svc.url, c.body.id, {});
    const [keyRow] = await svc.db.query<{ id: string }>('SELECT id FROM api_keys WHERE customer_id = $1', [c.body.id]);
    expect(apiKey).toMatch(/^ak_live_/);
    const now = new Date();
    await insertBatch(
      svc.db,
      Array.from({ length: 80 }, (_, i) => ({
        id: crypto.randomUUID(),
        customerId: c.body.id,
        chatAccountId: accountId,
        apiKeyId: keyRow!.id,
        externalId: `slow-${i}`,
        payloadHash: 'h',
        recipient: '+15551230000',
        channel: 'chat_official',
        contentJson: JSON.stringify({ type: 'text', text: 'hi' }),
        metadataJson: null,
        sandbox: false,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 86400_000),
        maxAttempts: 5,
        mediaId: null,
        quotaLimit: 20000,
      })),
    );
    // 80 messages at 10/s take 8 s, well past the 3 s lease: before booking was bounded, rows were re-claimed and sent again.
    await eventually(async () => emu.sent().filter((s) => s.phoneNumberId === phoneNumberId).length >= 50, 20_000, 100);
    const [booked] = await svc.db.query<{ ahead_ms: number }>(
      `SELECT extract(epoch FROM next_slot_at - now()) * 1000 AS ahead_ms FROM account_pacing WHERE account_id = $1`,
      [accountId],
    );
    expect(Number(booked!.ahead_ms)).toBeLessThan(3000);
    await svc.app.stop(); // with messages still booked or queued: those are handed back, not sent
    const sent = emu.sent().filter((s) => s.phoneNumberId === phoneNumberId);
    expect(new Set(sent.map((s) => s.messageId)).size).toBe(sent.length);
    expect(sent.length).toBeLessThan(80);
    const [left] = await svc.db.query<{ locked: number; open: number }>(
      `SELECT count(*) FILTER (WHERE locked_by IS NOT NULL)::int AS locked, count(*) FILTER (WHERE status IN ('pending', 'queued'))::int AS open FROM messages WHERE chat_account_id = $1`,
      [accountId],
    );
    expect(left).toEqual({ locked: 0, open: 80 - sent.length });
  });
});
