// Limits that are not per second (issue #25 item 4), through the real pipeline: the service sends
// to the provider emulator, which enforces the limit the way the provider documents it.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import {
  allDelivered,
  call,
  createAccount,
  createKey,
  eventually,
  type Service,
  textMessage,
} from './support/harness.js';
import { officialCustomer } from './support/official-customer.js';
import { metricSum } from './support/prometheus-text.js';

/** The service's first spacing after a 131056, and the emulator's pair window (one send per pair). */
const SPACING_MS = 600;
const PAIR_WINDOW_MS = 500;

describe('limits that are not per second', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let n = 0;
  const ext = () => `limits-${n++}`;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({
      PAIR_RATE_SPACING_MS: String(SPACING_MS),
      MARKETING_BLOCKED_MARKETS: 'US,+44',
    }));
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const tenant = async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'L', plan: 'pro' } });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-live-token' },
    });
    return { accountId, phoneNumberId, key: await createKey(svc.url, customer.body.id, {}) };
  };
  const send = async (key: string, phone: string) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key,
      body: textMessage(ext(), { to: { type: 'phone', phoneE164: phone } }),
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const waitDelivered = (key: string, ids: string[]) => allDelivered(svc.url, key, ids, 20_000);

  describe('pair rate limit (131056)', () => {
    it('paces the limited recipient from what it learned, retries it later, and lets the others flow', async () => {
      await emu.settings({ pairRateLimit: true, pairRateWindowMs: PAIR_WINDOW_MS });
      const t = await tenant();
      const limited = '+15557770001';
      // The first send to it is refused whatever the timing; the window refuses any too close after.
      await emu.rule({
        phoneNumberId: t.phoneNumberId,
        to: limited.slice(1),
        httpStatus: 400,
        error: { code: 131056, message: '(Business Account, Consumer Account) pair rate limit hit' },
        times: 1,
      });
      const heldBefore = await metricSum(svc.url, 'chatgate_dispatch_pair_paced_total');
      const limitedIds = await Promise.all([1, 2, 3, 4].map(() => send(t.key, limited)));
      const others = Array.from({ length: 20 }, (_, i) => `+1555777${String(1000 + i)}`);
      const otherIds = await Promise.all(others.map((p) => send(t.key, p)));

      const limitedMsgs = await waitDelivered(t.key, limitedIds);
      const otherMsgs = await waitDelivered(t.key, otherIds);

      // The others went once each, unslowed by the limited recipient.
      expect(otherMsgs.map((m) => m.attemptCount)).toEqual(others.map(() => 1));
      // The limited recipient got every message; each refusal used an attempt and was retried.
      const refusals = limitedMsgs.reduce((sum, m) => sum + m.attemptCount - 1, 0);
      expect(refusals).toBeGreaterThanOrEqual(1);
      expect(limitedMsgs.filter((m) => m.attemptCount > 1).map((m) => m.lastErrorCode)).toContain(
        'RECIPIENT_RATE_LIMITED',
      );
      // Sends held for their turn are counted, and the pair keeps its learned spacing.
      expect(await metricSum(svc.url, 'chatgate_dispatch_pair_paced_total')).toBeGreaterThan(heldBefore);
      const rows = await svc.db.query<{ recipient: string; spacing_ms: number }>(
        `SELECT recipient, spacing_ms FROM recipient_pacing WHERE chat_account_id = $1`,
        [t.accountId],
      );
      expect(rows.map((r) => r.recipient)).toEqual([limited]);
      expect(rows[0]!.spacing_ms).toBeGreaterThanOrEqual(SPACING_MS);
      // The limited recipient's accepted sends are spread over at least the learned spacings.
      const limitedAt = emu
        .sent()
        .filter((s) => s.phoneNumberId === t.phoneNumberId && s.to === limited.slice(1))
        .map((s) => s.at);
      expect(limitedAt).toHaveLength(4);
      expect(Math.max(...limitedAt) - Math.min(...limitedAt)).toBeGreaterThanOrEqual(2 * SPACING_MS);
      expect(emu.state.throttled.filter((s) => s.phoneNumberId === t.phoneNumberId)).toHaveLength(0);
    });
  });

  describe('marketing limits', () => {
    it('a marketing template to a blocked market fails before the provider, with its quota back; others go', async () => {
      const t = await officialCustomer(svc.url, emu);
      const send = async (to: string, name: string) => {
        const res = await call(svc.url, 'POST', '/messages', {
          key: t.key,
          body: {
            externalId: ext(),
            chatAccountId: t.accountIds[0],
            to: { type: 'phone', phoneE164: to },
            content: { type: 'template', template: { name, language: 'en_US' } },
          },
        });
        expect(res.status).toBe(201);
        return res.body.messageId as string;
      };
      const settled = (id: string) =>
        eventually(async () => {
          const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
          return m.status !== 'pending' && m.status !== 'queued' && m;
        });
      const usedBefore = (await call(svc.url, 'GET', '/usage', { key: t.key })).body.used;
      const us = await settled(await send('+12025550123', 'promo')); // a US number, by region
      const uk = await settled(await send('+447700900123', 'promo')); // +44, by calling code
      const canada = await settled(await send('+14165550123', 'promo')); // +1 but not US
      const utility = await settled(await send('+12025550124', 'receipt')); // not marketing
      for (const [m, market] of [
        [us, 'US'],
        [uk, '+44'],
      ] as const) {
        expect(m).toMatchObject({ status: 'failed', attemptCount: 0, error: { code: 'MARKETING_MARKET_BLOCKED' } });
        expect(m.error.message).toContain(market);
      }
      expect(canada.status).not.toBe('failed');
      expect(utility.status).not.toBe('failed');
      const atProvider = emu
        .sent()
        .filter((s) => s.phoneNumberId === t.phoneNumberIds[0])
        .map((s) => s.to);
      expect(atProvider.sort()).toEqual(['12025550124', '14165550123']);
      // Refused before sending: the quota they were charged is given back.
      expect((await call(svc.url, 'GET', '/usage', { key: t.key })).body.used - usedBefore).toBe(2);
    });
  });
});
