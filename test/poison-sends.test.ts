// A send, or a webhook POST, whose attempt kills its worker: the attempt is counted when it starts,
// before the provider (or the endpoint) is called, so after its attempt limit the message ends
// `failed` with SEND_INTERRUPTED (the delivery `failed`) instead of being claimed again after
// every lease without end, and the messages claimed beside it are sent (decision 0021). The
// counting on both backends (an attempt counted while the provider still holds the request, and
// not again when its outcome is recorded); real worker processes killed with SIGKILL on PostgreSQL.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { WEBHOOK_MAX_ATTEMPTS } from '../src/webhooks/deliverer.js';
import { type Emulator, providerEnv, startEmulator } from './support/emulator.js';
import {
  backend,
  call,
  createAccount,
  createKey,
  createTestDatabase,
  ENCRYPTION_KEY,
  eventually,
  type Service,
  startService,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const MAX_SEND_ATTEMPTS = 5;

/** A customer with one official account on `phoneNumberId`, its live key and the account id. */
async function tenant(url: string, phoneNumberId: string, throughputMps = 80) {
  const customer = await call(url, 'POST', '/admin/customers', {
    admin: true,
    body: { name: 'Poison', plan: 'pro' },
  });
  const accountId = await createAccount(url, customer.body.id, {
    official: { phoneNumberId, wabaId: 'w', accessToken: 'EAAG-poison-token' },
    throughputMps,
  });
  return { customerId: customer.body.id as string, accountId, key: await createKey(url, customer.body.id, {}) };
}

const send = async (url: string, key: string, externalId: string, phone: string) => {
  const r = await call(url, 'POST', '/messages', {
    key,
    body: textMessage(externalId, { to: { type: 'phone', phoneE164: `+${phone}` } }),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.messageId as string;
};

const heldFor = (emu: Emulator, messageId: string) => emu.state.held.filter((h) => h.messageId === messageId);

describe(`an attempt is counted when it starts (${backend})`, () => {
  let emu: Emulator;
  let svc: Service;
  let receiver: Receiver;

  beforeAll(async () => {
    emu = await startEmulator();
    receiver = await startReceiver();
    svc = await startService({
      env: {
        ...providerEnv(emu),
        PROVIDER_TIMEOUT_MS: '1500', // the held send times out (and is not sent again)
        WORKER_POLL_MS: '50',
        UNSAFE_ALLOW_PRIVATE_URLS: 'true', // the webhook receiver is on loopback
      },
    });
    await emu.settings({ callbackUrl: `${svc.url}/provider/webhooks/app`, enabled: false });
  });
  afterAll(async () => {
    await svc?.stop();
    await emu?.stop();
    await receiver?.close();
  });

  it('a send counts while the provider holds it, and its outcome does not count it again', async () => {
    const phoneNumberId = `pncount${crypto.randomBytes(4).toString('hex')}`;
    const t = await tenant(svc.url, phoneNumberId);
    await emu.rule({ to: '15550001111', phoneNumberId, hang: true, times: 1 });
    const id = await send(svc.url, t.key, 'counted-1', '15550001111');

    await eventually(async () => heldFor(emu, id).length === 1, 30_000, 10);
    // The provider has the request and has not answered: the attempt is already counted.
    const during = await call(svc.url, 'GET', `/messages/${id}`, { key: t.key });
    expect(during.body).toMatchObject({ status: 'queued', attemptCount: 1 });
    expect(during.body.processing).toMatchObject({ attemptCount: 1, queueState: 'in_flight' });
    expect(during.body.processing.lastAttemptAt).not.toBeNull();

    // It times out (attempt 1 recorded as PROVIDER_TIMEOUT): the provider may have it, so it is
    // not sent again, and with no receipt it fails after its wait (decision 0061).
    const done = await eventually(
      async () => {
        const r = await call(svc.url, 'GET', `/messages/${id}`, { key: t.key });
        return r.body.status === 'failed' ? r.body : undefined;
      },
      30_000,
      50,
    );
    // One provider request, one attempt: not counted twice, not sent twice.
    expect(emu.sent().filter((s) => s.messageId === id)).toHaveLength(0);
    expect(heldFor(emu, id)).toHaveLength(1);
    expect(done).toMatchObject({
      attemptCount: 1,
      lastErrorCode: 'PROVIDER_TIMEOUT',
      error: { code: 'PROVIDER_TIMEOUT' },
    });
  }, 60_000);

  it('a message claimed with every attempt counted and no outcome fails with SEND_INTERRUPTED, without a call', async () => {
    const phoneNumberId = `pnretake${crypto.randomBytes(4).toString('hex')}`;
    const t = await tenant(svc.url, phoneNumberId);
    // Scheduled an hour ahead, so that no worker takes it before it looks like a message whose
    // five attempts each stopped their worker (counted at their start, no outcome recorded).
    const r = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: textMessage('retaken', { sendAt: new Date(Date.now() + 3600_000).toISOString() }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.messageId as string;
    expect(
      await svc.db.query(
        `UPDATE messages SET status = 'queued', attempt_count = max_attempts, last_attempt_at = now(), due_at = now()
          WHERE id = $1 AND status = 'pending' AND locked_by IS NULL RETURNING id`,
        [id],
      ),
    ).toHaveLength(1);
    const failed = await eventually(
      async () => {
        const m = await call(svc.url, 'GET', `/messages/${id}`, { key: t.key });
        return m.body.status === 'failed' ? m.body : undefined;
      },
      30_000,
      50,
    );
    expect(failed).toMatchObject({ attemptCount: MAX_SEND_ATTEMPTS, error: { code: 'SEND_INTERRUPTED' } });
    expect(emu.sent().filter((s) => s.messageId === id)).toHaveLength(0);
    expect(heldFor(emu, id)).toHaveLength(0);
  });

  it('a webhook POST counts while the endpoint holds it, and its outcome does not count it again', async () => {
    const t = await tenant(svc.url, `pnhook${crypto.randomBytes(4).toString('hex')}`);
    const endpoint = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${receiver.url}/counted` },
    });
    expect(endpoint.status).toBe(201);
    // The first request is held (no answer) until the deliverer gives up on it (10 s, the spec's).
    receiver.handle((req) => (req.path === '/counted' && req.index === 0 ? { hang: true } : undefined));
    const test = await call(svc.url, 'POST', `/webhook-endpoints/${endpoint.body.id}/test`, { key: t.key });
    expect(test.status).toBe(202);
    await receiver.waitForRequests(1, { timeoutMs: 30_000 });
    const deliveries = async () =>
      (await call(svc.url, 'GET', `/webhook-endpoints/${endpoint.body.id}/deliveries`, { key: t.key })).body.deliveries;
    const [held] = await deliveries();
    expect(held).toMatchObject({ status: 'pending', attemptCount: 1 });
    // The held POST times out, is recorded as attempt 1, and the retry succeeds.
    const [done] = await eventually(
      async () => {
        const ds = await deliveries();
        return ds[0]?.status === 'succeeded' ? ds : undefined;
      },
      60_000,
      100,
    );
    expect(receiver.requests.filter((r) => r.path === '/counted')).toHaveLength(2);
    expect(done).toMatchObject({ status: 'succeeded', attemptCount: 2 });
  }, 90_000);
});

describe.runIf(backend === 'postgres')('a send that kills its worker (worker processes, PostgreSQL)', () => {
  // A killed worker's lease is passed on the tests' clock (test/support/test-clock.ts), not waited
  // out: the leases are written and read with the database's now(), which the clock moves for the
  // worker processes too. Eight webhook leases of 12 s were most of this file's time.
  const LEASE_S = { send: 3, webhook: 12 };
  let emu: Emulator;
  let database: TestDatabase;
  let api: Service;
  let receiver: Receiver;
  const running: ChatgateProcess[] = [];

  const worker = (label: string, extra: Record<string, string> = {}) => {
    const p = spawnChatgate(
      ['serve', '--role', 'worker'],
      {
        ...providerEnv(emu),
        DATABASE_URL: database.url!,
        ENCRYPTION_KEY,
        WORKER_POLL_MS: '50',
        PROVIDER_TIMEOUT_MS: '1000',
        WORKER_LEASE_SECONDS: String(LEASE_S.send), // a killed worker's messages are claimed again after it
        WEBHOOK_LEASE_SECONDS: String(LEASE_S.webhook), // the least allowed
        UNSAFE_ALLOW_PRIVATE_URLS: 'true',
        ...extra,
      },
      label,
    );
    running.push(p);
    return p;
  };
  const kill = async (p: ChatgateProcess) => {
    p.child.kill('SIGKILL');
    expect((await p.exited).signal).toBe('SIGKILL');
  };

  beforeAll(async () => {
    emu = await startEmulator();
    receiver = await startReceiver();
    database = await createTestDatabase({ clock: true });
    api = await startService({
      role: 'api',
      database,
      env: { ...providerEnv(emu), UNSAFE_ALLOW_PRIVATE_URLS: 'true' },
    });
    await emu.settings({ callbackUrl: `${api.url}/provider/webhooks/app`, enabled: false });
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await api?.stop();
    await database?.drop();
    await emu?.stop();
    await receiver?.close();
  });

  it('a message whose send kills the worker every time ends failed after its attempts; the rest of its batch is sent', async () => {
    const phoneNumberId = `pnpoison${crypto.randomBytes(4).toString('hex')}`;
    const t = await tenant(api.url, phoneNumberId, 20);
    const poisonPhone = '15550009999';
    await emu.rule({ to: poisonPhone, phoneNumberId, hang: true }); // every send of it is held
    // The poison message first (the first slot of its claim), then ten others claimed with it.
    const poison = await send(api.url, t.key, 'poison', poisonPhone);
    const others: string[] = [];
    for (let i = 0; i < 10; i++) others.push(await send(api.url, t.key, `beside-${i}`, `1555000${1000 + i}`));

    // Each time its send reaches the provider, the worker holding it is killed.
    for (let attempt = 1; attempt <= MAX_SEND_ATTEMPTS; attempt++) {
      const w = worker(`poison-worker-${attempt}`);
      await eventually(async () => heldFor(emu, poison).length >= attempt, 120_000, 10);
      await kill(w);
      await database.clock!.advance(LEASE_S.send * 1000); // its lease has run out
      const [row] = await database.db.query<{ attempt_count: number; status: string }>(
        'SELECT attempt_count, status FROM messages WHERE id = $1',
        [poison],
      );
      expect(row).toEqual({ attempt_count: attempt, status: 'queued' });
    }
    // The next worker finds every attempt used and fails it without calling the provider.
    const last = worker('poison-worker-last');
    const failed = await eventually(
      async () => {
        const r = await call(api.url, 'GET', `/messages/${poison}`, { key: t.key });
        return r.body.status === 'failed' ? r.body : undefined;
      },
      60_000,
      100,
    );
    expect(failed).toMatchObject({
      attemptCount: MAX_SEND_ATTEMPTS,
      lastErrorCode: 'SEND_INTERRUPTED',
      error: { code: 'SEND_INTERRUPTED' },
    });
    expect(heldFor(emu, poison)).toHaveLength(MAX_SEND_ATTEMPTS);
    expect(emu.sent().filter((s) => s.messageId === poison)).toHaveLength(0);

    // Every message claimed beside it went out (a send whose outcome a kill lost may have gone twice).
    for (const id of others) {
      const m = await eventually(
        async () => {
          const r = await call(api.url, 'GET', `/messages/${id}`, { key: t.key });
          return r.body.status === 'sent' ? r.body : undefined;
        },
        60_000,
        100,
      );
      expect(emu.sent().some((s) => s.messageId === id)).toBe(true);
      expect(m.attemptCount).toBeGreaterThanOrEqual(1);
    }
    await kill(last);
  }, 600_000);

  it('a webhook delivery whose POST kills the worker every time ends failed after its attempts', async () => {
    const t = await tenant(api.url, `pnpoisonhook${crypto.randomBytes(4).toString('hex')}`);
    const endpoint = await call(api.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${receiver.url}/poison` },
    });
    expect(endpoint.status).toBe(201);
    receiver.handle((req) => (req.path === '/poison' ? { hang: true } : undefined));
    const test = await call(api.url, 'POST', `/webhook-endpoints/${endpoint.body.id}/test`, { key: t.key });
    expect(test.status).toBe(202);
    const posts = () => receiver.requests.filter((r) => r.path === '/poison').length;

    for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt++) {
      const w = worker(`hook-worker-${attempt}`);
      await eventually(async () => posts() >= attempt, 120_000, 10);
      await kill(w);
      await database.clock!.advance(LEASE_S.webhook * 1000); // its lease has run out
      const [row] = await database.db.query<{ attempt_count: number; status: string }>(
        'SELECT attempt_count, status FROM webhook_deliveries WHERE endpoint_id = $1',
        [endpoint.body.id],
      );
      expect(row).toEqual({ attempt_count: attempt, status: 'pending' });
    }
    const last = worker('hook-worker-last');
    const [delivery] = await eventually(
      async () => {
        const r = await call(api.url, 'GET', `/webhook-endpoints/${endpoint.body.id}/deliveries`, { key: t.key });
        return r.body.deliveries[0]?.status === 'failed' ? r.body.deliveries : undefined;
      },
      60_000,
      100,
    );
    expect(delivery).toMatchObject({ status: 'failed', attemptCount: WEBHOOK_MAX_ATTEMPTS });
    expect(posts()).toBe(WEBHOOK_MAX_ATTEMPTS);
    const ep = await call(api.url, 'GET', `/webhook-endpoints/${endpoint.body.id}`, { key: t.key });
    expect(ep.body.lastFailureReason).toMatch(/^interrupted/);
    await kill(last);
  }, 600_000);
});
