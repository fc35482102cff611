// GET /usage and quota.threshold: the daily rollup against what GET /messages shows after real
// sends, receipts and failures through the emulator; the month parameter; tenant and key-scope
// isolation; the same numbers as the 429; the threshold events once each per month.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { quotaMonth } from '../src/plans/plans.js';
import { verifyWebhookSignature } from '../src/webhooks/signature.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import {
  backend,
  call,
  createAccount,
  createKey,
  createTenant,
  createTestDatabase,
  ENCRYPTION_KEY,
  eventually,
  type Service,
  setQuotaUsed,
  startService,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const COUNTERS = ['accepted', 'sent', 'delivered', 'read', 'failed'] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;
const zero = (): Counters => ({ accepted: 0, sent: 0, delivered: 0, read: 0, failed: 0 });
const FINAL = ['read', 'failed'];

/** What GET /usage should say, counted from GET /messages: each stamp on its UTC day, sandbox left out. */
function countFromMessages(messages: any[]) {
  const byDay = new Map<string, Counters>();
  const byAccount = new Map<string, Counters>();
  const stamps = {
    accepted: 'createdAt',
    sent: 'sentAt',
    delivered: 'deliveredAt',
    read: 'readAt',
    failed: 'failedAt',
  };
  for (const m of messages.filter((x) => !x.sandbox)) {
    for (const c of COUNTERS) {
      const at = m[stamps[c]] as string | null;
      if (at === null) continue;
      const day = at.slice(0, 10);
      byDay.set(day, { ...(byDay.get(day) ?? zero()), [c]: (byDay.get(day)?.[c] ?? 0) + 1 });
      const acc = byAccount.get(m.chatAccountId) ?? zero();
      byAccount.set(m.chatAccountId, { ...acc, [c]: acc[c] + 1 });
    }
  }
  return {
    byDay: [...byDay.entries()].sort().map(([date, n]) => ({ date, ...n })),
    byAccount: [...byAccount.entries()].sort().map(([chatAccountId, n]) => ({ chatAccountId, ...n })),
  };
}
const activeDays = (usage: any) => usage.byDay.filter((d: any) => COUNTERS.some((c) => d[c] > 0));

describe('usage after live sends through the provider emulator', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await stop();
    await receiver.close();
  });
  beforeEach(() => resetEmulator(emu, { statuses: ['sent', 'delivered', 'read'] }));

  const liveTenant = async (plan: string, accounts: number) => {
    const customer = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Usage', plan } });
    const customerId = customer.body.id as string;
    const accountIds: string[] = [];
    for (let i = 0; i < accounts; i++)
      accountIds.push(
        await createAccount(svc.url, customerId, {
          official: { phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`, wabaId: 'w1', accessToken: 'tok' },
        }),
      );
    return {
      customerId,
      accountIds,
      key: await createKey(svc.url, customerId, {}),
      sandboxKey: await createKey(svc.url, customerId, { sandbox: true }),
    };
  };
  const listMessages = async (key: string) =>
    (await call(svc.url, 'GET', '/messages?limit=100', { key })).body.messages;

  it('counts what GET /messages shows: accepted, sent, delivered, read and failed per day and account', async () => {
    const t = await liveTenant('basic', 2);
    // Refused at the send (permanent error) and failed by a receipt after sent.
    await emu.rule({ to: '15559990001', httpStatus: 400, error: { code: 131026, message: 'Undeliverable' } });
    await emu.rule({ to: '15559990002', asyncFailure: { code: 131047, title: 'Re-engagement message' } });
    // Receipts well after the send's answer, so the failure receipt finds the send recorded (under
    // load, one that beats it fails the message from queued, never counted as sent).
    await emu.settings({ delayMs: 300 });
    const sends = [
      ...['+15551110001', '+15551110002', '+15551110003', '+15559990001'].map((to) => [t.accountIds[0], to]),
      ...['+15551110004', '+15559990002'].map((to) => [t.accountIds[1], to]),
    ];
    for (const [i, [account, to]] of sends.entries()) {
      const res = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: textMessage(`u-${i}`, { chatAccountId: account, to: { type: 'phone', phoneE164: to } }),
      });
      expect(res.status).toBe(201);
    }
    // Sandbox sends go through the simulated cycle and never count.
    for (const to of ['+15551110088', '+15551110099'])
      expect(
        (
          await call(svc.url, 'POST', '/messages', {
            key: t.sandboxKey,
            body: textMessage(`sb-${to}`, { chatAccountId: t.accountIds[0], to: { type: 'phone', phoneE164: to } }),
          })
        ).status,
      ).toBe(201);

    const messages = await eventually(async () => {
      const all = await listMessages(t.key);
      return all.length === 8 && all.every((m: any) => FINAL.includes(m.status)) ? all : undefined;
    }, 30_000);
    expect(messages.filter((m: any) => m.status === 'failed' && !m.sandbox)).toHaveLength(2);

    const usage = (await call(svc.url, 'GET', '/usage', { key: t.key })).body;
    const expected = countFromMessages(messages);
    expect(activeDays(usage)).toEqual(expected.byDay);
    expect(usage.byAccount).toEqual(expected.byAccount);
    // The mix: 6 accepted, 5 reached the provider (one refused at once), 4 read, 2 failed.
    const total = zero();
    for (const a of usage.byAccount) for (const c of COUNTERS) total[c] += a[c];
    expect(total).toEqual({ accepted: 6, sent: 5, delivered: 4, read: 4, failed: 2 });
    expect(usage.byAccount.find((a: any) => a.chatAccountId === t.accountIds[0]).accepted).toBe(4);
    expect(usage).toMatchObject({ plan: 'basic', limit: 10000, used: 6, remaining: 9994 });
    await emu.settings({ delayMs: 20 });
    expect(usage.month).toBe(quotaMonth(new Date()).month.slice(0, 7));
    expect(usage.byDay.at(-1).date).toBe(new Date().toISOString().slice(0, 10));
    expect(usage.byDay[0].date).toBe(`${usage.month}-01`);
  });

  it('sends quota.threshold at 80 % and 100 % once each, to subscribed endpoints, in the spec envelope', async () => {
    const t = await liveTenant('basic', 1);
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${receiver.url}/quota`, events: ['message.status', 'quota.threshold'] },
    });
    expect(created.body.events).toContain('quota.threshold'); // opt-in: not in the default set
    await setQuotaUsed(svc.db, t.customerId, 7998);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      if (i === 2) await setQuotaUsed(svc.db, t.customerId, 9999);
      statuses.push((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage(`q-${i}`) })).status);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
    const quota = await receiver.waitForRequests(2, {
      timeoutMs: 30_000,
      filter: (r) => r.headers['x-svc-event'] === 'quota.threshold',
    });
    const { resetsAt } = quotaMonth(new Date());
    const bodies = quota.map((r) => JSON.parse(r.body)).sort((a, b) => a.data.threshold - b.data.threshold);
    expect(bodies.map((b) => b.data)).toEqual([
      { threshold: 80, limit: 10000, used: 8000, resetsAt },
      { threshold: 100, limit: 10000, used: 10000, resetsAt },
    ]);
    for (const [i, r] of quota.entries()) {
      expect(Object.keys(JSON.parse(r.body))).toEqual(['eventId', 'type', 'createdAt', 'data']);
      expect(JSON.parse(r.body).eventId).toMatch(/^evt_[0-9a-f-]{36}$/);
      expect(r.headers['x-svc-event-id']).toBe(JSON.parse(r.body).eventId);
      expect(verifyWebhookSignature(r.rawBody, String(r.headers['x-svc-signature']), created.body.secret)).toBe(true);
      expect(bodies[i]!.type).toBe('quota.threshold');
    }
    // Each went once: the outbox holds one event per threshold.
    const rows = await svc.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE customer_id = $1 AND type = 'quota.threshold'`,
      [t.customerId],
    );
    expect(rows[0]!.n).toBe(2);
  });
});

describe('GET /usage', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  const send = (key: string, externalId: string, extra: Record<string, unknown> = {}) =>
    call(svc.url, 'POST', '/messages', { key, body: textMessage(externalId, extra) });
  const usage = async (key: string, query = '') => (await call(svc.url, 'GET', `/usage${query}`, { key })).body;
  const thresholdEvents = (customerId: string) =>
    svc.db.query<{ data: any }>(
      `SELECT data FROM events WHERE customer_id = $1 AND type = 'quota.threshold' ORDER BY created_at`,
      [customerId],
    );

  it('takes a past month (nothing in it) and refuses a month that is not YYYY-MM', async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    expect((await send(t.key, 'now')).status).toBe(201);
    const past = await usage(t.key, '?month=2024-02');
    expect(past).toMatchObject({
      month: '2024-02',
      plan: 'starter',
      limit: 2000,
      used: 0,
      remaining: 2000,
      resetsAt: '2024-03-01T00:00:00.000Z',
      byAccount: [],
    });
    expect(past.byDay).toHaveLength(29);
    expect(past.byDay.every((d: any) => COUNTERS.every((c) => d[c] === 0))).toBe(true);
    expect((await usage(t.key, '?month=2999-01')).byDay).toEqual([]); // no day of it has begun
    for (const bad of ['2026-13', '2026-1', 'june', '2026-06-01']) {
      const res = await call(svc.url, 'GET', `/usage?month=${bad}`, { key: t.key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'validation_error',
        details: [{ path: 'month', message: expect.any(String) }],
      });
    }
  });

  it('keeps customers apart and limits a scoped key to its account (the quota stays the customer’s)', async () => {
    const a = await createTenant(svc.url, { plan: 'pro', accounts: 2 });
    const b = await createTenant(svc.url, { plan: 'pro' });
    const [first, second] = a.accountIds as [string, string];
    for (let i = 0; i < 3; i++) expect((await send(a.key, `a1-${i}`, { chatAccountId: first })).status).toBe(201);
    expect((await send(a.key, 'a2', { chatAccountId: second })).status).toBe(201);
    expect((await send(a.sandboxKey, 'a-sandbox', { chatAccountId: first })).status).toBe(201);
    expect((await send(b.key, 'b1')).status).toBe(201);

    const whole = await usage(a.key);
    expect(whole.used).toBe(4);
    expect(whole.byAccount).toEqual(
      [
        { chatAccountId: first, ...zero(), accepted: 3 },
        { chatAccountId: second, ...zero(), accepted: 1 },
      ].sort((x, y) => (x.chatAccountId < y.chatAccountId ? -1 : 1)),
    );
    const today = new Date().toISOString().slice(0, 10);
    expect(activeDays(whole)).toEqual([{ date: today, ...zero(), accepted: 4 }]);
    // A sandbox key reads no live counts (decision 0024-sandbox-keys): its own sends never count,
    // so it sees the month with every count zero.
    expect(await usage(a.sandboxKey)).toEqual({
      ...whole,
      used: 0,
      remaining: whole.limit,
      byDay: whole.byDay.map((d: { date: string }) => ({ date: d.date, ...zero() })),
      byAccount: [],
    });

    const scopedKey = await createKey(svc.url, a.customerId, { chatAccountId: second });
    const scoped = await usage(scopedKey);
    expect(scoped).toMatchObject({ used: 4, limit: 20000, remaining: 19996 });
    expect(scoped.byAccount).toEqual([{ chatAccountId: second, ...zero(), accepted: 1 }]);
    expect(activeDays(scoped)).toEqual([{ date: today, ...zero(), accepted: 1 }]);

    const other = await usage(b.key);
    expect(other.used).toBe(1);
    expect(other.byAccount).toEqual([{ chatAccountId: b.accountId, ...zero(), accepted: 1 }]);
  });

  it('answers with the numbers of the 429 once over quota', async () => {
    const t = await createTenant(svc.url, { plan: 'free' });
    await setQuotaUsed(svc.db, t.customerId, 498);
    const replies = await Promise.all([0, 1, 2, 3].map((i) => send(t.key, `over-${i}`)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 201, 429, 429]);
    const refused = replies.find((r) => r.status === 429)!.body;
    const u = await usage(t.key);
    expect({ error: 'quota_exceeded', limit: u.limit, used: u.used, resetsAt: u.resetsAt }).toEqual(refused);
    expect(u.remaining).toBe(0);
    expect(activeDays(u)[0].accepted).toBe(2); // what was accepted; the counter was set by hand
  });

  it('counts a broadcast, alerts once per threshold and month even after a refund and a second crossing', async () => {
    const t = await createTenant(svc.url, { plan: 'basic' });
    await setQuotaUsed(svc.db, t.customerId, 7996);
    const recipients = [1, 2, 3, 4, 5].map((i) => ({ phoneE164: `+1555222000${i}` }));
    const bc = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: { externalId: 'bc-1', content: { type: 'text', text: 'Sale' }, recipients },
    });
    expect(bc.status).toBe(201);
    expect((await usage(t.key)).used).toBe(8001);
    expect((await thresholdEvents(t.customerId)).map((e) => e.data)).toEqual([
      { threshold: 80, limit: 10000, used: 8001, resetsAt: quotaMonth(new Date()).resetsAt },
    ]);
    // Cancelled before any was tried (no worker here): the quota is given back, below 80 % again.
    expect((await call(svc.url, 'POST', `/broadcasts/${bc.body.broadcastId}/cancel`, { key: t.key })).status).toBe(200);
    const afterRefund = await usage(t.key);
    expect(afterRefund.used).toBe(7996);
    expect(afterRefund.byAccount).toEqual([{ chatAccountId: t.accountId, ...zero(), accepted: 5, failed: 5 }]);
    for (let i = 0; i < 5; i++) expect((await send(t.key, `again-${i}`)).status).toBe(201);
    expect((await usage(t.key)).used).toBe(8001);
    expect(await thresholdEvents(t.customerId)).toHaveLength(1);
  });
});

describe.runIf(backend === 'postgres')('quota.threshold with two API processes racing on one PostgreSQL', () => {
  let database: TestDatabase;
  let api: Service;
  let other: ChatgateProcess;
  let otherUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startService({ role: 'api', database, env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true' } });
    other = spawnChatgate(
      ['serve', '--role', 'api'],
      { DATABASE_URL: database.url!, ENCRYPTION_KEY, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      'usage-api-2',
    );
    otherUrl = (await other.waitForLine((l) => l.msg === 'chatgate listening', 120_000)).address as string;
  }, 150_000);
  afterAll(async () => {
    other?.child.kill('SIGTERM');
    await other?.exited;
    await api.stop();
    await database.drop();
  });

  it('sends each threshold once however the sends are spread over the processes', async () => {
    const t = await createTenant(api.url, { plan: 'basic' });
    const endpoint = await call(api.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'https://hooks.example.com/quota', events: ['quota.threshold'] },
    });
    expect(endpoint.status).toBe(201);
    const burst = (prefix: string, n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          call(i % 2 === 0 ? api.url : otherUrl, 'POST', '/messages', {
            key: t.key,
            body: textMessage(`${prefix}-${i}`),
          }),
        ),
      );
    await setQuotaUsed(database.db, t.customerId, 7985);
    expect((await burst('a', 30)).every((r) => r.status === 201)).toBe(true);
    await setQuotaUsed(database.db, t.customerId, 9985);
    const replies = await burst('b', 30);
    expect(replies.filter((r) => r.status === 201)).toHaveLength(15);

    const events = await database.db.query<{ id: string; data: any }>(
      `SELECT id, data FROM events WHERE customer_id = $1 AND type = 'quota.threshold' ORDER BY data->>'threshold'`,
      [t.customerId],
    );
    expect(events.map((e) => e.data.threshold).sort()).toEqual([100, 80]);
    expect(events.find((e) => e.data.threshold === 100)!.data).toMatchObject({ limit: 10000, used: 10000 });
    const deliveries = await database.db.query<{ event_id: string }>(
      'SELECT event_id FROM webhook_deliveries WHERE endpoint_id = $1',
      [endpoint.body.id],
    );
    expect(deliveries.map((d) => d.event_id).sort()).toEqual(events.map((e) => e.id).sort());
  });
});
