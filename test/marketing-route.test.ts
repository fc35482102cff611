// Marketing templates over the provider's Marketing Messages API (issue #25 item 1, decision
// 0038), through the real pipeline: the account setting routes MARKETING templates to
// /marketing_messages by their current category (catalog, then the category-update webhook), the
// rest to /messages; an account the provider refuses as not onboarded (131055) falls back to
// /messages and stays there for a while; each message says which route carried it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { metricSum } from './support/prometheus-text.js';

describe('marketing templates over the Marketing Messages API', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const customer = async (opts: { setting?: boolean; onboarded?: boolean }) => {
    const t = await officialCustomer(svc.url, emu);
    if (opts.setting !== undefined) {
      const res = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountIds[0]}`, {
        admin: true,
        body: { marketingMessagesApi: opts.setting },
      });
      expect(res.status).toBe(200);
      expect(res.body.marketingMessages).toEqual({ enabled: opts.setting, refusedUntil: null });
    }
    if (opts.onboarded) await emu.number(t.phoneNumberIds[0]!, { marketingMessagesOnboarded: true });
    return t;
  };
  const send = async (t: OfficialCustomer, name: string) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `mm-${n++}`,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: '+15557000100' },
        content: { type: 'template', template: { name, language: 'en_US' } },
      },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const sentMessage = (t: OfficialCustomer, id: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      if (m.status === 'failed') throw new Error(`failed: ${JSON.stringify(m.error)}`);
      return m.status === 'sent' || m.status === 'delivered' ? m : undefined;
    });
  /** The operator's view of the customer's (one) account. */
  const operatorAccount = async (t: OfficialCustomer) =>
    (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/chat-accounts`, { admin: true })).body
      .chatAccounts[0];
  const routeAtProvider = (id: string) => emu.sent().find((s) => s.messageId === id)?.route;

  it('routes by the current category when the account has it on; the message says which route', async () => {
    const t = await customer({ setting: true, onboarded: true });
    const promo = await sentMessage(t, await send(t, 'promo'));
    const receipt = await sentMessage(t, await send(t, 'receipt'));
    expect(promo.processing.route).toBe('marketing_messages');
    expect(routeAtProvider(promo.messageId)).toBe('marketing_messages');
    expect(receipt.processing.route).toBe('messages');
    expect(routeAtProvider(receipt.messageId)).toBe('messages');
    // The provider recategorised promo (its category-update webhook): from now on it goes over /messages.
    const res = await emu.reviewTemplate(t.wabaIds[0]!, t.templateIds[0]!.promo!, {
      category: 'UTILITY',
      timestamp: Math.floor(Date.now() / 1000),
    });
    expect(res.webhooksDelivered).toBe(true);
    const again = await sentMessage(t, await send(t, 'promo'));
    expect(again.processing.route).toBe('messages');
    expect(routeAtProvider(again.messageId)).toBe('messages');
  });

  it('keeps the route when the receipt is applied before the send outcome', async () => {
    await emu.settings({ beforeResponse: true }); // receipts posted, and waited for, before the send answers
    const t = await customer({ setting: true, onboarded: true });
    const promo = await sentMessage(t, await send(t, 'promo'));
    expect(routeAtProvider(promo.messageId)).toBe('marketing_messages');
    expect(
      await eventually(async () => {
        const m = (await call(svc.url, 'GET', `/messages/${promo.messageId}`, { key: t.key })).body;
        return m.processing.route === 'marketing_messages' && m.attemptCount === 1;
      }),
    ).toBe(true);
  });

  it('is off by default: marketing templates stay on /messages', async () => {
    const t = await customer({ onboarded: true });
    expect((await operatorAccount(t)).marketingMessages).toEqual({ enabled: false, refusedUntil: null });
    const promo = await sentMessage(t, await send(t, 'promo'));
    expect(promo.processing.route).toBe('messages');
    expect(routeAtProvider(promo.messageId)).toBe('messages');
  });

  it('falls back to /messages in the same attempt when the provider says the account is not onboarded, and stays there', async () => {
    const t = await customer({ setting: true, onboarded: false });
    const refusalsBefore = await metricSum(svc.url, 'chatgate_send_attempts_total', {
      code: 'MARKETING_MESSAGES_NOT_ONBOARDED',
    });
    const first = await sentMessage(t, await send(t, 'promo'));
    expect(first).toMatchObject({ attemptCount: 1, lastErrorCode: null, processing: { route: 'messages' } });
    expect(routeAtProvider(first.messageId)).toBe('messages');
    const { marketingMessages } = await operatorAccount(t);
    expect(marketingMessages.enabled).toBe(true);
    expect(Date.parse(marketingMessages.refusedUntil)).toBeGreaterThan(Date.now());
    // The next marketing template goes straight to /messages: the provider refused the API once only.
    const second = await sentMessage(t, await send(t, 'promo'));
    expect(second.processing.route).toBe('messages');
    expect(
      (await metricSum(svc.url, 'chatgate_send_attempts_total', { code: 'MARKETING_MESSAGES_NOT_ONBOARDED' })) -
        refusalsBefore,
    ).toBe(1);
    // Switching the setting on again forgets the refusal: once onboarded, the API carries them.
    await emu.number(t.phoneNumberIds[0]!, { marketingMessagesOnboarded: true });
    const res = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountIds[0]}`, {
      admin: true,
      body: { marketingMessagesApi: true },
    });
    expect(res.body.marketingMessages.refusedUntil).toBeNull();
    const third = await sentMessage(t, await send(t, 'promo'));
    expect(third.processing.route).toBe('marketing_messages');
  });

  it('sandbox and unsent messages have no route', async () => {
    const t = await customer({ setting: true, onboarded: true });
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `mm-${n++}`,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: '+15557000100' },
        content: { type: 'template', template: { name: 'promo', language: 'en_US' } },
        sendAt: new Date(Date.now() + 3600_000).toISOString(),
      },
    });
    expect(res.status).toBe(201);
    const m = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: t.key })).body;
    expect(m.processing.route).toBeNull();
  });
});
