// An account marked after a rejected token is re-verified by itself (the account prober): it stays
// marked and fails sends fast while the provider refuses the token, backs off between probes, and
// returns to CONNECTED once the provider accepts the token again; an operator edit resets it.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import {
  call,
  createAccount,
  createKey,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';

const TOKEN = 'EAAG-probe-token';
const REJECTED = { httpStatus: 401, error: { code: 190, message: 'Error validating access token' } };
// Generous: a loaded 2-core machine; the probe delays themselves are scaled down (RETRY_TIME_SCALE).
const DEADLINE_MS = 30_000;

type ProbeRow = { status: string; last_error_code: string | null; probe_attempts: number; probe_next_at: Date | null };

describe('account prober', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let n = 0;
  const ext = () => `probe-${n++}`;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const tenant = async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Probe', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    await emu.number(phoneNumberId, { accessToken: TOKEN });
    const accountId = await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: TOKEN },
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      key: await createKey(svc.url, customer.body.id, {}),
    };
  };
  const send = async (key: string) => {
    const res = await call(svc.url, 'POST', '/messages', { key, body: textMessage(ext()) });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const waitStatus = (key: string, id: string, status: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
      return m.status === status ? m : undefined;
    }, DEADLINE_MS);
  const publicAccount = async (key: string) => (await call(svc.url, 'GET', '/chat-accounts', { key })).body.accounts[0];
  const operatorAccount = async (customerId: string) =>
    (await call(svc.url, 'GET', `/admin/customers/${customerId}/chat-accounts`, { admin: true })).body.chatAccounts[0];
  const probeRow = async (accountId: string) =>
    (
      await svc.db.query<ProbeRow>(
        'SELECT status, last_error_code, probe_attempts, probe_next_at FROM chat_accounts WHERE id = $1',
        [accountId],
      )
    )[0]!;
  const waitProbe = (accountId: string, check: (r: ProbeRow) => boolean) =>
    eventually(async () => {
      const r = await probeRow(accountId);
      return check(r) ? r : undefined;
    }, DEADLINE_MS);
  const lookups = (phoneNumberId: string) => emu.state.lookups.filter((l) => l.phoneNumberId === phoneNumberId).length;
  const sent = (phoneNumberId: string) => emu.sent().filter((s) => s.phoneNumberId === phoneNumberId).length;
  /** Send requests that met the rule (each consumes one of its `times`), accepted or not. */
  const met = (rule: { id: number }) => 1000 - emu.state.rules.find((r) => r.id === rule.id)!.times!;

  /** A send meets a rejected token: the account is marked and probed. */
  const rejectToken = async (t: { phoneNumberId: string; key: string }) => {
    const sendRule = await emu.rule({ phoneNumberId: t.phoneNumberId, ...REJECTED, times: 1000 });
    await emu.rule({ phoneNumberId: t.phoneNumberId, to: 'lookup', ...REJECTED });
    const first = await send(t.key);
    expect(await waitStatus(t.key, first, 'failed')).toMatchObject({
      attemptCount: 1,
      lastErrorCode: 'AUTH_REJECTED',
      error: { code: 'AUTH_REJECTED', provider: { code: 190 } },
    });
    return sendRule;
  };

  it('recovers a rejected token by itself once the provider accepts it again', async () => {
    const t = await tenant();
    const sendRule = await rejectToken(t);
    expect(await publicAccount(t.key)).toMatchObject({ status: 'ERROR', lastErrorCode: 'AUTH_REJECTED' });
    // While marked, sends fail fast: no provider call.
    const second = await send(t.key);
    expect(await waitStatus(t.key, second, 'failed')).toMatchObject({
      attemptCount: 0,
      lastErrorCode: 'AUTH_REJECTED',
    });
    expect(met(sendRule)).toBe(1);
    // The probe asks, is refused, and the account stays marked.
    await eventually(async () => lookups(t.phoneNumberId) >= 2, DEADLINE_MS);
    expect(await publicAccount(t.key)).toMatchObject({ status: 'ERROR', lastErrorCode: 'AUTH_REJECTED' });
    // The operator sees the probe (customers do not).
    const probing = await operatorAccount(t.customerId);
    expect(probing.probe.attempts).toBeGreaterThanOrEqual(1);
    expect(Date.parse(probing.probe.nextAt)).not.toBeNaN();
    expect(await publicAccount(t.key)).not.toHaveProperty('probe');

    // The provider accepts the token again; nobody touches the account.
    await emu.clearRules();
    const account = await eventually(async () => {
      const a = await publicAccount(t.key);
      return a.status === 'CONNECTED' ? a : undefined;
    }, DEADLINE_MS);
    expect(account.lastErrorCode).toBe('AUTH_REJECTED'); // kept as history
    expect(await probeRow(t.accountId)).toMatchObject({ probe_attempts: 0, probe_next_at: null });
    expect((await operatorAccount(t.customerId)).probe).toBeNull();
    const third = await send(t.key);
    await waitStatus(t.key, third, 'delivered');
    expect(sent(t.phoneNumberId)).toBe(1);
  });

  it('backs off while the token stays rejected, one probe at a time', async () => {
    const t = await tenant();
    await rejectToken(t);
    const seen: ProbeRow[] = [];
    for (let attempts = 1; attempts <= 4; attempts++)
      seen.push(await waitProbe(t.accountId, (r) => r.probe_attempts >= attempts));
    // Each refused probe counts one more attempt and moves the next probe later.
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.probe_attempts).toBeGreaterThan(seen[i - 1]!.probe_attempts);
      expect(seen[i]!.probe_next_at!.getTime()).toBeGreaterThan(seen[i - 1]!.probe_next_at!.getTime());
    }
    expect(seen.every((r) => r.status === 'ERROR' && r.last_error_code === 'AUTH_REJECTED')).toBe(true);
    // One lookup per probe (one more may be on the wire).
    const { attempts, calls } = await quietCount(t);
    expect(calls - attempts).toBeGreaterThanOrEqual(0);
    expect(calls - attempts).toBeLessThanOrEqual(1);
  });

  it('probes an account once at a time with several workers on the database', async () => {
    const extra = await Promise.all(
      [0, 1].map(() => startService({ role: 'worker', database: svc.database, env: { ...workerEnv(svc) } })),
    );
    try {
      const t = await tenant();
      await rejectToken(t);
      // Slow answers: a probe is on the wire across several polls of the other workers.
      await emu.settings({ latencyMs: 300 });
      await waitProbe(t.accountId, (r) => r.probe_attempts >= 5);
      const { attempts, calls } = await quietCount(t);
      expect(calls - attempts).toBeLessThanOrEqual(1);
    } finally {
      for (const w of extra) await w.stop();
    }
  });

  it('resets the probe at once on an operator edit', async () => {
    const t = await tenant();
    await rejectToken(t);
    await waitProbe(t.accountId, (r) => r.probe_attempts >= 1);
    // A long backoff (as after hours of refusals): the next probe is far away.
    await svc.db.query(`UPDATE chat_accounts SET probe_next_at = now() + interval '1 day' WHERE id = $1`, [
      t.accountId,
    ]);
    await emu.clearRules();
    // An edit that leaves the status (here: the token, re-entered) makes the probe due now.
    const edit = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
      admin: true,
      body: { official: { accessToken: TOKEN } },
    });
    expect(edit.status).toBe(200);
    await waitProbe(t.accountId, (r) => r.status === 'CONNECTED' && r.probe_next_at === null);

    // An edit that sets the status decides: the probe stops at once.
    await rejectToken(t);
    await waitProbe(t.accountId, (r) => r.probe_attempts >= 1);
    const decided = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
      admin: true,
      body: { status: 'ERROR' },
    });
    expect(decided.body).toMatchObject({ status: 'ERROR', lastErrorCode: 'AUTH_REJECTED' });
    expect(await probeRow(t.accountId)).toMatchObject({ probe_attempts: 0, probe_next_at: null });
    await emu.clearRules();
    const fixed = await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
      admin: true,
      body: { status: 'CONNECTED', lastErrorCode: null },
    });
    expect(fixed.body).toMatchObject({ status: 'CONNECTED', lastErrorCode: null });
    const id = await send(t.key);
    await waitStatus(t.key, id, 'delivered');
  });

  it('leaves other account errors to the operator', async () => {
    const t = await tenant();
    await emu.rule({ phoneNumberId: t.phoneNumberId, httpStatus: 403, error: { code: 131031, message: 'locked' } });
    const id = await send(t.key);
    expect(await waitStatus(t.key, id, 'failed')).toMatchObject({ lastErrorCode: 'ACCOUNT_LOCKED' });
    expect(await probeRow(t.accountId)).toMatchObject({
      status: 'ERROR',
      last_error_code: 'ACCOUNT_LOCKED',
      probe_attempts: 0,
      probe_next_at: null,
    });
    expect(lookups(t.phoneNumberId)).toBe(0);
  });

  /** Probes made (lookups) and refusals recorded (attempts), read when no lookup started meanwhile. */
  async function quietCount(t: { accountId: string; phoneNumberId: string }) {
    return eventually(async () => {
      const before = lookups(t.phoneNumberId);
      const { probe_attempts: attempts } = await probeRow(t.accountId);
      return lookups(t.phoneNumberId) === before ? { attempts, calls: before } : undefined;
    }, DEADLINE_MS);
  }
});

/** The settings of the service under test, for more worker processes on its database. */
const workerEnv = (svc: Service) => ({
  PROVIDER_BASE_URL: svc.config.providerBaseUrl,
  PROVIDER_TIMEOUT_MS: String(svc.config.providerTimeoutMs),
  RETRY_TIME_SCALE: String(svc.config.retryTimeScale),
  WORKER_POLL_MS: '50',
});
