// The number's throughput tier (issue #25 item 4, decision 0042), through the real pipeline: the
// emulator holds a number in maintenance (131057) for a while, as the provider does during a
// throughput upgrade, then reports it HIGH (1,000 mps).
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

/** The service's account-wide pause after a 131057: longer than the emulator's maintenance window, so one pause. */
const PAUSE_MS = 1500;
const WINDOW_MS = 1000;
const TOKEN = 'EAAG-tier-token';

describe('throughput tier', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ PROVIDER_MAINTENANCE_PAUSE_MS: String(PAUSE_MS) }));
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const tenant = async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'T', plan: 'pro' } });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: TOKEN },
    });
    const key = await createKey(svc.url, customer.body.id, {});
    return { customerId: customer.body.id as string, accountId, phoneNumberId, key };
  };
  const account = async (customerId: string, accountId: string) => {
    const res = await call(svc.url, 'GET', `/admin/customers/${customerId}/chat-accounts`, { admin: true });
    const items = res.body.chatAccounts as { id: string; throughputMps: number }[];
    return items.find((a) => a.id === accountId)!;
  };
  const send = async (key: string, phone: string) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key,
      body: textMessage(`tier-${n++}`, { to: { type: 'phone', phoneE164: phone } }),
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };

  it('pauses the account during a maintenance window, delivers every message after it, and follows the upgraded level', async () => {
    const t = await tenant();
    expect((await account(t.customerId, t.accountId)).throughputMps).toBe(80);
    await emu.number(t.phoneNumberId, {
      accessToken: TOKEN,
      maintenanceUntil: Date.now() + WINDOW_MS,
      throughputAfterMaintenance: 1000,
    });
    const phones = Array.from({ length: 30 }, (_, i) => `+1555888${String(1000 + i)}`);
    const ids = await Promise.all(phones.map((p) => send(t.key, p)));

    const msgs = await allDelivered(svc.url, t.key, ids, 30_000);

    const refused = emu.state.maintenanceRefused.filter((r) => r.phoneNumberId === t.phoneNumberId);
    expect(refused.length).toBeGreaterThan(0);
    // Only the sends in flight when the number refused used an attempt: the rest waited, unspent.
    const attempts = msgs.reduce((sum, m) => sum + (m.attemptCount as number), 0);
    expect(attempts).toBe(ids.length + refused.length);
    expect(refused.length).toBeLessThanOrEqual(ids.length / 3);
    // Accepted only once the window was over (the emulator's clock is this process's).
    const sent = emu.state.sent.filter((s) => s.phoneNumberId === t.phoneNumberId);
    expect(sent).toHaveLength(ids.length);

    // The pause over, the number's level is read again: HIGH, so the pacing ceiling is 1,000.
    await eventually(async () => (await account(t.customerId, t.accountId)).throughputMps === 1000, 15_000);
    expect(emu.state.lookups.some((l) => l.phoneNumberId === t.phoneNumberId)).toBe(true);
  });
});
