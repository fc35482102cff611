// The business portfolio's messaging limit (issue #25 item 4, decision 0044), through the real
// server, dispatcher and emulator: unique recipients of business-initiated sends (templates to a
// closed reply window) are counted per portfolio across its accounts; 80 % and 100 % write one
// event each; sends beyond the limit fail at once with PORTFOLIO_LIMIT_REACHED and never reach
// the provider (the emulator enforces the same limit and would fail them); the tier is learned
// from the provider's webhooks; other customers are not affected.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { metricSum } from './support/prometheus-text.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Msg = { messageId: string; status: string; attemptCount: number; error: { code: string; message: string } | null };

describe('portfolio messaging limit', () => {
  let svc: Service;
  let emu: Emulator;
  let receiver: Receiver;
  let stop: () => Promise<void>;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await stop();
    await receiver.close();
  });
  beforeEach(() => resetEmulator(emu));

  const patch = async (accountId: string, body: Record<string, unknown>) => {
    const res = await call(svc.url, 'PATCH', `/admin/chat-accounts/${accountId}`, { admin: true, body });
    expect(res.status).toBe(200);
    return res.body;
  };
  /** Sends one message and waits until it left (sent or delivered) or failed. */
  const send = async (t: OfficialCustomer, account: number, phone: string, content?: Record<string, unknown>) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `pl-${n++}`,
        chatAccountId: t.accountIds[account],
        to: { type: 'phone', phoneE164: phone },
        content: content ?? { type: 'template', template: { name: 'receipt', language: 'en_US' } },
      },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const settled = (t: OfficialCustomer, id: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body as Msg;
      return ['sent', 'delivered', 'failed'].includes(m.status) ? m : undefined;
    }, 30_000);
  const sendAndSettle = async (
    t: OfficialCustomer,
    account: number,
    phone: string,
    content?: Record<string, unknown>,
  ) => settled(t, await send(t, account, phone, content));
  const limitEvents = (t: OfficialCustomer) =>
    receiver.requests
      .filter((r) => r.path === `/c/${t.customerId}` && r.headers['x-svc-event'] === 'account.messaging_limit')
      .map((r) => JSON.parse(r.body).data as Record<string, unknown>);
  const operatorAccount = async (t: OfficialCustomer, i = 0) =>
    (
      await call(svc.url, 'GET', `/admin/customers/${t.customerId}/chat-accounts`, { admin: true })
    ).body.chatAccounts.find((a: { id: string }) => a.id === t.accountIds[i]);
  /** Two accounts (two WABAs) grouped by the operator into one portfolio, at `limit`; the emulator groups them alike. */
  const portfolioCustomer = async (limit: number) => {
    const t = await officialCustomer(svc.url, emu, { accounts: 2, receiver });
    const portfolioId = `biz-${crypto.randomBytes(4).toString('hex')}`;
    await patch(t.accountIds[0]!, { portfolioId, messagingLimit: limit });
    await patch(t.accountIds[1]!, { portfolioId });
    await emu.portfolio(portfolioId, { wabaIds: t.wabaIds, messagingLimit: limit, webhook: 'none' });
    return { t, portfolioId };
  };
  const phone = () => `+1555${crypto.randomInt(1_000_000, 9_999_999)}`;

  it('counts unique recipients across the accounts of one portfolio, alerts once at 80 % and 100 %, and fails sends beyond it without a provider call', async () => {
    const { t, portfolioId } = await portfolioCustomer(5);
    const [r1, r2, r3, r4, r5, r6, r7, open] = Array.from({ length: 8 }, phone) as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    // r1 twice and over both accounts: one recipient.
    for (const [account, to] of [
      [0, r1],
      [0, r2],
      [1, r1],
      [1, r3],
    ] as const)
      expect((await sendAndSettle(t, account, to)).status).not.toBe('failed');
    // Text and templates inside an open reply window start no conversation.
    const wrote = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], from: open, text: 'hi' }),
    });
    expect(((await wrote.json()) as { delivered: boolean }).delivered).toBe(true);
    expect((await sendAndSettle(t, 0, open)).status).not.toBe('failed');
    expect((await sendAndSettle(t, 0, open, { type: 'text', text: 'reply' })).status).not.toBe('failed');
    expect((await operatorAccount(t)).messagingLimit).toMatchObject({ limit: 5, used: 3, source: 'operator' });
    expect(limitEvents(t)).toEqual([]);

    expect((await sendAndSettle(t, 1, r4)).status).not.toBe('failed'); // 4 of 5: 80 %
    expect((await sendAndSettle(t, 0, r5)).status).not.toBe('failed'); // 5 of 5: 100 %
    const beyond = [await sendAndSettle(t, 0, r6), await sendAndSettle(t, 1, r7)];
    for (const m of beyond) {
      expect(m.status).toBe('failed');
      expect(m.attemptCount).toBe(0);
      expect(m.error!.code).toBe('PORTFOLIO_LIMIT_REACHED');
      expect(m.error!.message).toContain('5 unique recipients');
    }
    // A recipient already started in the window still gets templates.
    expect((await sendAndSettle(t, 1, r2)).status).not.toBe('failed');

    const atProvider = new Set(emu.sent().map((s) => s.messageId));
    for (const m of beyond) expect(atProvider.has(m.messageId)).toBe(false);
    expect(emu.state.portfolioRefused.filter((r) => t.phoneNumberIds.includes(r.phoneNumberId))).toEqual([]);

    // Every send has settled, so every crossing is written (in the admission's transaction): the
    // events table holds two, and once none of the customer's deliveries is pending, the receiver
    // has had every one of them (no fixed wait for a third that should not come).
    const written = await svc.db.query<{ data: Record<string, unknown> }>(
      `SELECT data FROM events WHERE customer_id = $1 AND type = 'account.messaging_limit'
        ORDER BY (data->>'thresholdPercent')::int`,
      [t.customerId],
    );
    expect(written.map((e) => e.data.thresholdPercent)).toEqual([80, 100]);
    await eventually(async () => {
      const [row] = await svc.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE customer_id = $1 AND status = 'pending'`,
        [t.customerId],
      );
      return row!.n === 0;
    });
    const events = limitEvents(t);
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.thresholdPercent)).toEqual([80, 100]);
    expect(events[1]).toMatchObject({
      portfolioId,
      used: 5,
      limit: 5,
      tier: null,
      source: 'operator',
      windowHours: 24,
    });
    expect([...(events[1]!.chatAccountIds as string[])].sort()).toEqual([...t.accountIds].sort());

    // Both accounts show the portfolio's use: the operator's view and the customer's.
    for (const i of [0, 1])
      expect(await operatorAccount(t, i)).toMatchObject({
        portfolioId,
        messagingLimit: { limit: 5, used: 5, tier: null, source: 'operator', windowHours: 24 },
      });
    const mine = await call(svc.url, 'GET', '/chat-accounts', { key: t.key });
    expect(mine.status).toBe(200);
    for (const a of mine.body.accounts) {
      expect(a.messagingLimit).toEqual({ limit: 5, tier: null, source: 'operator', used: 5, windowHours: 24 });
      expect(a.portfolioId).toBeUndefined();
    }
    expect(await metricSum(svc.url, 'chatgate_portfolio_limit_total', { outcome: 'refused' })).toBeGreaterThanOrEqual(
      2,
    );
    expect(
      await metricSum(svc.url, 'chatgate_portfolio_limit_total', { outcome: 'alert', threshold: '100' }),
    ).toBeGreaterThanOrEqual(1);

    // Another customer, its own account at the default limit, is not affected.
    const other = await officialCustomer(svc.url, emu);
    expect((await sendAndSettle(other, 0, r6)).status).not.toBe('failed');
    expect((await operatorAccount(other)).messagingLimit).toMatchObject({
      limit: 250,
      used: 1,
      tier: 'TIER_250',
      source: 'default',
    });
  });

  it('admits exactly the limit when many sends to new recipients are claimed together', async () => {
    const { t } = await portfolioCustomer(5);
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => send(t, i % 2, phone())));
    const msgs = await Promise.all(ids.map((id) => settled(t, id)));
    const failed = msgs.filter((m) => m.status === 'failed');
    expect(failed.map((m) => m.error!.code)).toEqual(Array(7).fill('PORTFOLIO_LIMIT_REACHED'));
    expect(msgs.filter((m) => m.status !== 'failed')).toHaveLength(5);
    expect(emu.state.portfolioRefused.filter((r) => t.phoneNumberIds.includes(r.phoneNumberId))).toEqual([]);
    const events = await eventually(async () => (limitEvents(t).length >= 2 ? limitEvents(t) : undefined));
    expect(events.map((e) => e.thresholdPercent).sort()).toEqual([100, 80]);
  });

  it('the emulator enforces the limit the way the provider does when the service does not know it', async () => {
    // The provider's portfolio is at 1; the service was not told (no webhook) and counts 250.
    const t = await officialCustomer(svc.url, emu);
    await emu.portfolio(`biz-${crypto.randomBytes(4).toString('hex')}`, {
      wabaIds: t.wabaIds,
      messagingLimit: 1,
      webhook: 'none',
    });
    expect((await sendAndSettle(t, 0, phone())).status).not.toBe('failed');
    const second = await send(t, 0, phone());
    const m = await eventually(async () => {
      const x = (await call(svc.url, 'GET', `/messages/${second}`, { key: t.key })).body as Msg;
      return x.status === 'failed' ? x : undefined;
    }, 30_000);
    // Accepted by the provider, then not delivered: one call spent per refused message.
    expect(m.attemptCount).toBe(1);
    expect(m.error!.code).toBe('UNDELIVERABLE');
    const refused = emu.state.portfolioRefused.filter((r) => t.phoneNumberIds.includes(r.phoneNumberId));
    expect(refused.map((r) => r.messageId)).toEqual([second]);
  });

  it("learns the portfolio's limit from the provider's webhooks", async () => {
    const t = await officialCustomer(svc.url, emu);
    const portfolioId = `biz-${crypto.randomBytes(4).toString('hex')}`;
    const limitNow = async () => (await operatorAccount(t)).messagingLimit;
    expect(await limitNow()).toMatchObject({ limit: 250, source: 'default' });

    const capability = await emu.portfolio(portfolioId, {
      wabaIds: t.wabaIds,
      messagingLimit: 2000,
      webhook: 'business_capability_update',
    });
    expect(capability.delivered).toBe(true);
    expect(await limitNow()).toMatchObject({ limit: 2000, tier: 'TIER_2K', source: 'provider' });

    const quality = await emu.portfolio(portfolioId, {
      messagingLimit: 10_000,
      webhook: 'phone_number_quality_update',
    });
    expect(quality.delivered).toBe(true);
    expect(await limitNow()).toMatchObject({ limit: 10_000, tier: 'TIER_10K', source: 'provider' });

    await emu.portfolio(portfolioId, { messagingLimit: null, webhook: 'business_capability_update' });
    expect(await limitNow()).toMatchObject({ limit: null, tier: 'TIER_UNLIMITED', source: 'provider' });
    // Unlimited: nothing is refused or counted.
    expect((await sendAndSettle(t, 0, phone())).status).not.toBe('failed');
    expect(await limitNow()).toMatchObject({ limit: null, used: 0 });

    // The operator's word is the latest until the provider speaks again.
    await patch(t.accountIds[0]!, { messagingLimit: 1 });
    expect(await limitNow()).toMatchObject({ limit: 1, tier: null, source: 'operator' });
  });
});
