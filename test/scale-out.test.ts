// Several worker processes on one PostgreSQL: shared pacing, no duplicate send while leases hold,
// and takeover of a killed worker's messages. PostgreSQL only (PGlite is one process).
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import {
  type Emulator,
  maxPerSecond,
  type ProcessEmulator,
  providerEnv,
  spawnEmulator,
  startEmulator,
} from './support/emulator.js';
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

describe.runIf(backend === 'postgres')('worker processes sharing one PostgreSQL', () => {
  let database: TestDatabase;
  let api: Service;
  let emu: Emulator;
  const children: ChildProcess[] = [];

  const spawnWorker = (env: Record<string, string> = {}, preload: string[] = []) => {
    const args = [...preload.flatMap((p) => ['--import', p]), ...chatgateArgs('serve', '--role', 'worker')];
    const child = spawn(process.execPath, args, {
      env: {
        ...process.env,
        ...providerEnv(emu),
        DATABASE_URL: database.url!,
        ENCRYPTION_KEY,
        LOG_LEVEL: 'warn',
        WORKER_POLL_MS: '100',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };
  const tenant = async (throughputMps: number) => {
    const customer = await call(api.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Scale', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    await createAccount(api.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w', accessToken: 'tok' },
      throughputMps,
    });
    return {
      customerId: customer.body.id as string,
      phoneNumberId,
      key: await createKey(api.url, customer.body.id, {}),
    };
  };
  const sendMany = async (key: string, prefix: string, count: number) => {
    const replies = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        call(api.url, 'POST', '/messages', { key, body: textMessage(`${prefix}-${i}`) }),
      ),
    );
    for (const r of replies) expect(r.status).toBe(201);
  };
  const count = async (sql: string) =>
    (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE ${sql}`))[0]!.n;

  beforeAll(async () => {
    emu = await startEmulator();
    database = await createTestDatabase();
    api = await startService({ role: 'api', database, env: providerEnv(emu) });
    await emu.settings({ callbackUrl: `${api.url}/provider/webhooks/app`, enabled: false });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await api.stop();
    await database.drop();
    await emu.stop();
  });

  it('a key revoked through one API process stops working in another at once', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const other = spawn(process.execPath, chatgateArgs('serve', '--role', 'api'), {
      env: {
        ...process.env,
        ...providerEnv(emu),
        DATABASE_URL: database.url!,
        ENCRYPTION_KEY,
        LOG_LEVEL: 'warn',
        PORT: String(port),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(other);
    const otherUrl = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${otherUrl}/healthz`)).ok, 30_000, 100);
    const t = await tenant(80);
    const [key] = (await call(api.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true })).body
      .apiKeys;
    // The other process has the key cached now (for at most the directory's 60 s safety TTL).
    const cachedBy = Date.now();
    expect((await call(otherUrl, 'POST', '/messages', { key: t.key, body: textMessage('before-revoke') })).status).toBe(
      201,
    );
    expect((await call(otherUrl, 'GET', '/messages', { key: t.key })).status).toBe(200);
    expect((await call(api.url, 'DELETE', `/admin/api-keys/${key.id}`, { admin: true })).status).toBe(204);
    // A send is refused at once (checked in its own transaction), reads as soon as the NOTIFY lands.
    expect(await call(otherUrl, 'POST', '/messages', { key: t.key, body: textMessage('after-revoke') })).toMatchObject({
      status: 401,
      body: { error: 'Invalid API key' },
    });
    // Ordering, not a latency bound: dropped by the NOTIFY, well before the TTL could have expired
    // the cached entry (a missed notification would keep the key working for up to 60 s).
    await eventually(
      async () => (await call(otherUrl, 'GET', '/messages', { key: t.key })).status === 401,
      cachedBy + 45_000 - Date.now(),
      10,
    );
    other.kill('SIGTERM');
    await database.db.query('DELETE FROM messages');
  });

  it("two workers together never exceed an account's throughput", async () => {
    const t = await tenant(25);
    // Arrivals are timed by an emulator in a process of its own (not this busy one, which runs the
    // API and the test), and every arrival counts, the ones it refused with 130429 too. It refuses
    // above 26 a second: the cap and one message of tolerance for the workers' timer jitter (they
    // book 0.97 × 25 a second, so a real excess shows as more than one).
    const paced: ProcessEmulator = await spawnEmulator();
    try {
      await paced.settings({ enabled: false });
      await paced.number(t.phoneNumberId, { throughputMps: 26 });
      const workers = [spawnWorker(providerEnv(paced)), spawnWorker(providerEnv(paced))];
      try {
        await sendMany(t.key, 'pace', 100);
        await eventually(async () => (await count(`status = 'sent'`)) === 100, 60_000, 100);
      } finally {
        // Even when an assertion failed: left running, they would send the next test's messages too.
        for (const w of workers) w.kill('SIGTERM');
        await Promise.all(workers.map((w) => new Promise((r) => w.once('exit', r))));
      }
      const sent = (await paced.sent()).filter((s) => s.phoneNumberId === t.phoneNumberId);
      const throttled = (await paced.throttled()).filter((s) => s.phoneNumberId === t.phoneNumberId);
      expect(new Set(sent.map((s) => s.messageId)).size).toBe(100);
      expect(sent).toHaveLength(100);
      const arrivals = [...sent, ...throttled].map((s) => s.at).sort((a, b) => a - b);
      expect(maxPerSecond(arrivals)).toBeLessThanOrEqual(26);
      expect(throttled).toEqual([]);
      // Over the whole run the rate is the cap's, not more: 100 sends take at least 99 intervals of
      // the booked rate, less one interval of jitter at either end.
      expect(arrivals[arrivals.length - 1]! - arrivals[0]!).toBeGreaterThanOrEqual((97 / 25) * 1000 * 0.97);
    } finally {
      await paced.stop();
    }
  });

  it("a worker whose clock is off from the database's keeps the account's pace and sends", async () => {
    const SKEW_CAP = 30;
    // Slots are booked in the database's clock and fired on the process's timers. A worker 1 s
    // behind the database fired its slots a second late, over the slots an on-time worker booked
    // after them; one 1 s ahead saw its slots as past (late: booked again until they were a second
    // ahead), then fired them a second early, over the on-time worker's: twice the cap either way.
    // Each process now reads its offset from the database clock when it books.
    const paced: ProcessEmulator = await spawnEmulator();
    const skewed = (ms: number) => ({ ...providerEnv(paced), SKEWED_CLOCK_MS: String(ms) });
    const clock = ['./test/support/skewed-clock.mjs'];
    const run = async (prefix: string, n: number, workers: ChildProcess[]) => {
      const t = await tenant(25);
      // Two processes each read the database clock's offset to within half a round trip, and
      // their timers fire late under load: the number allows 30/s, room for that jitter; a skew
      // of a second (the bug) doubles the rate to about 50/s, far over it.
      await paced.number(t.phoneNumberId, { throughputMps: SKEW_CAP });
      try {
        await sendMany(t.key, prefix, n);
        await eventually(
          async () => (await count(`status = 'sent' AND customer_id = '${t.customerId}'`)) === n,
          60_000,
          100,
        );
      } finally {
        for (const w of workers) w.kill('SIGTERM');
        await Promise.all(workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : null)));
      }
      const sent = (await paced.sent()).filter((s) => s.phoneNumberId === t.phoneNumberId);
      const throttled = (await paced.throttled()).filter((s) => s.phoneNumberId === t.phoneNumberId);
      expect(new Set(sent.map((s) => s.messageId)).size).toBe(n);
      expect(throttled).toEqual([]);
      expect(maxPerSecond([...sent, ...throttled].map((s) => s.at))).toBeLessThanOrEqual(SKEW_CAP);
    };
    try {
      await paced.settings({ enabled: false });
      await run('ahead', 100, [spawnWorker(skewed(1000), clock), spawnWorker(skewed(0), clock)]);
      await run('behind', 100, [spawnWorker(skewed(-1000), clock), spawnWorker(skewed(0), clock)]);
    } finally {
      await paced.stop();
    }
  });

  it("takes over a killed worker's messages after its lease, with duplicates bounded by what was in flight", async () => {
    await database.db.query('DELETE FROM messages');
    emu.state.sent.length = 0;
    await emu.settings({ latencyMs: 300 });
    // The account's throughput is the number's at the emulator (80/s, as the provider's default):
    // an account set above it meets 130429 refusals, whose retries are not what this test is about.
    const t = await tenant(80);
    // A 3 s lease allows at most a 1 s provider timeout (the emulator answers in 300 ms).
    const killEnv = {
      WORKER_LEASE_SECONDS: '3',
      PROVIDER_TIMEOUT_MS: '1000',
      WORKER_MAX_IN_FLIGHT: '40',
      WORKER_BATCH_SIZE: '40',
    };
    const victim = spawnWorker(killEnv);
    await sendMany(t.key, 'kill', 300);
    await eventually(async () => emu.sent().length >= 40, 20_000, 20);
    victim.kill('SIGKILL');
    const killedAt = Date.now();
    spawnWorker(killEnv);
    await eventually(async () => (await count(`status IN ('sent', 'failed')`)) === 300, 60_000, 100);
    expect(Date.now() - killedAt).toBeLessThan(60_000);
    // None failed (the error codes shown when one did: the cause is then in the message).
    const failed = await database.db.query<{ last_error_code: string | null; attempt_count: number; error: unknown }>(
      `SELECT last_error_code, attempt_count, error FROM messages WHERE status = 'failed'`,
    );
    expect(failed).toEqual([]);
    const sends = emu.sent().filter((s) => s.phoneNumberId === t.phoneNumberId);
    const distinct = new Set(sends.map((s) => s.messageId));
    expect(distinct.size).toBe(300);
    expect(sends.length - 300).toBeLessThanOrEqual(40);
  });
});
