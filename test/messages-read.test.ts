import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, type Service, startService, textMessage } from './support/harness.js';

describe('reading messages and accounts', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  const ids: string[] = [];

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    t = await createTenant(svc.url, { plan: 'pro', accounts: 2 });
    for (let i = 0; i < 7; i++) {
      const res = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: textMessage(`read-${i}`, { chatAccountId: t.accountIds[i % 2] }),
      });
      ids.push(res.body.messageId);
    }
    await svc.db.query(
      `UPDATE messages SET status = 'sent', provider_message_id = 'wamid.X' || external_id WHERE external_id = 'read-3'`,
    );
  });
  afterAll(() => svc.stop());

  it('pages 50 messages by default: exactly 50 fit one page, the 51st starts a second', async () => {
    const c = await createTenant(svc.url, { plan: 'pro' });
    const sendN = async (from: number, to: number) => {
      for (let i = from; i < to; i += 10) {
        const replies = await Promise.all(
          Array.from({ length: Math.min(10, to - i) }, (_, k) =>
            call(svc.url, 'POST', '/messages', { key: c.key, body: textMessage(`page-${i + k}`) }),
          ),
        );
        for (const r of replies) expect(r.status).toBe(201);
      }
    };
    await sendN(0, 50);
    const whole = await call(svc.url, 'GET', '/messages', { key: c.key });
    expect(whole.status).toBe(200);
    expect(whole.body.messages).toHaveLength(50);
    expect(whole.body.nextCursor).toBeNull();
    await sendN(50, 51);
    const first = await call(svc.url, 'GET', '/messages', { key: c.key });
    expect(first.body.messages).toHaveLength(50);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(svc.url, 'GET', `/messages?cursor=${encodeURIComponent(first.body.nextCursor)}`, {
      key: c.key,
    });
    expect(second.body.messages).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const all = [...first.body.messages, ...second.body.messages].map((m: { externalId: string }) => m.externalId);
    expect(new Set(all).size).toBe(51);
  });

  it('gets one message by messageId or externalId, with the full shape', async () => {
    const byId = await call(svc.url, 'GET', `/messages/${ids[0]}`, { key: t.key });
    expect(byId.status).toBe(200);
    expect(Object.keys(byId.body).sort()).toEqual([
      'attemptCount',
      'broadcastId',
      'channel',
      'chatAccountId',
      'createdAt',
      'deliveredAt',
      'error',
      'expiresAt',
      'externalId',
      'failedAt',
      'lastErrorCode',
      'messageId',
      'metadata',
      'pricing',
      'processing',
      'providerMessageId',
      'reactions',
      'readAt',
      'recipient',
      'recipientUserId',
      'sandbox',
      'scheduledAt',
      'sentAt',
      'status',
    ]);
    expect(byId.body.scheduledAt).toBeNull();
    expect(byId.body.processing).toEqual({
      queueState: 'waiting',
      attemptCount: 0,
      maxAttempts: 5,
      nextAttemptAt: byId.body.createdAt,
      lastAttemptAt: null,
      route: null,
    });
    const byExternal = await call(svc.url, 'GET', '/messages/read-0', { key: t.key });
    expect(byExternal.body.messageId).toBe(ids[0]);
    expect(await call(svc.url, 'GET', '/messages/unknown-id', { key: t.key })).toMatchObject({
      status: 404,
      body: { error: 'message_not_found' },
    });
    expect((await call(svc.url, 'GET', '/messages/6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f', { key: t.key })).status).toBe(
      404,
    );
  });

  it('finds by externalId even when it looks like another message id', async () => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: textMessage(ids[1]!, { chatAccountId: t.accountIds[0] }),
    });
    expect(res.status).toBe(201);
    // The messageId match wins over an externalId equal to it.
    expect((await call(svc.url, 'GET', `/messages/${ids[1]}`, { key: t.key })).body.messageId).toBe(ids[1]);
  });

  it('lists newest first with an opaque cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page: { body: { messages: { messageId: string; createdAt: string }[]; nextCursor: string | null } } =
        await call(svc.url, 'GET', `/messages?limit=3${q}`, { key: t.key });
      seen.push(...page.body.messages.map((m) => m.messageId));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toHaveLength(8);
    expect(new Set(seen).size).toBe(8);
    expect(seen.slice(1)).toEqual(expect.arrayContaining([...ids].reverse()));
    expect(pages).toBe(3);
    const all = await call(svc.url, 'GET', '/messages', { key: t.key });
    const times = all.body.messages.map((m: { createdAt: string }) => Date.parse(m.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.body.nextCursor).toBeNull();
  });

  it('answers invalid_cursor for a malformed cursor', async () => {
    for (const cursor of [
      'abc',
      'eyJ4IjoxfQ',
      Buffer.from('["2026-01-01T00:00:00.000Z","nope"]').toString('base64url'),
      '!!!',
    ]) {
      expect(
        await call(svc.url, 'GET', `/messages?cursor=${encodeURIComponent(cursor)}`, { key: t.key }),
      ).toMatchObject({ status: 400, body: { error: 'invalid_cursor' } });
    }
  });

  it('filters by status, externalId, providerMessageId, channel, account and time', async () => {
    const get = async (q: string) =>
      (await call(svc.url, 'GET', `/messages?${q}`, { key: t.key })).body.messages.map(
        (m: { externalId: string }) => m.externalId,
      );
    expect(await get('status=sent')).toEqual(['read-3']);
    expect(await get('externalId=read-2')).toEqual(['read-2']);
    expect(await get('providerMessageId=wamid.Xread-3')).toEqual(['read-3']);
    expect((await get('channel=chat_official')).length).toBe(8);
    expect((await get(`chatAccountId=${t.accountIds[1]}`)).sort()).toEqual(['read-1', 'read-3', 'read-5']);
    expect(await get('since=2100-01-01T00:00:00Z')).toEqual([]);
    expect((await get('until=2100-01-01T00:00:00Z')).length).toBe(8);
    expect(await get('until=2000-01-01T00:00:00Z')).toEqual([]);
  });

  it('validates the query', async () => {
    const res = await call(
      svc.url,
      'GET',
      '/messages?limit=0&status=lost&since=yesterday&channel=chat_direct&chatAccountId=x&foo=1',
      { key: t.key },
    );
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'channel',
      'chatAccountId',
      'foo',
      'limit',
      'since',
      'status',
    ]);
    expect((await call(svc.url, 'GET', '/messages?limit=101', { key: t.key })).status).toBe(400);
    expect((await call(svc.url, 'GET', '/messages?limit=100', { key: t.key })).status).toBe(200);
    expect(
      await call(svc.url, 'GET', '/messages?chatAccountId=6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f', { key: t.key }),
    ).toMatchObject({ status: 404, body: { error: 'account_not_found' } });
  });

  it('shows the accounts with capabilities by plan', async () => {
    const res = await call(svc.url, 'GET', '/chat-accounts', { key: t.key });
    expect(res.status).toBe(200);
    expect(res.body.accounts).toHaveLength(2);
    const a = res.body.accounts[0];
    expect(a).toMatchObject({
      type: 'OFFICIAL',
      status: 'CONNECTED',
      channel: 'chat_official',
      lastErrorCode: null,
      official: { wabaId: 'waba1', wabaVerification: 'unverifiable' },
      sendPolicy: { mode: 'PRODUCTION', testRecipientsCount: 0 },
      webhook: { integrationId: null, callbackUrl: 'https://chatgate.test/provider/webhooks/app' },
      capabilities: {
        text: { supported: true, enabled: true },
        media: { supported: true, enabled: true },
        template: { supported: true, enabled: true },
        namedTemplateParameters: { supported: true, enabled: true, scope: 'body' },
        templateManagement: { supported: true, enabled: false, verifiedAt: null },
        statusWebhooks: { supported: true, enabled: true },
      },
    });
    expect(JSON.stringify(res.body)).not.toContain('EAAG-secret-token');
    const free = await createTenant(svc.url, { plan: 'free' });
    const freeAccount = (await call(svc.url, 'GET', '/chat-accounts', { key: free.key })).body.accounts[0];
    expect(freeAccount.capabilities.template).toEqual({ supported: true, enabled: false });
  });
});
