import { type ChildProcess, spawn } from 'node:child_process';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createApp } from '../src/app.js';
import { claimDue } from '../src/lifecycle/claim.js';
import { chatgateArgs } from './support/cli-build.js';
import {
  backend,
  call,
  createTenant,
  createTestDatabase,
  ENCRYPTION_KEY,
  eventually,
  type Service,
  startService,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';

async function sendMany(svc: Service, key: string, prefix: string, count: number, phone = '+15551234500') {
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) =>
      call(svc.url, 'POST', '/messages', {
        key,
        body: { ...textMessage(`${prefix}-${i + j}`), to: { type: 'phone', phoneE164: phone } },
      }),
    );
    for (const r of await Promise.all(batch)) expect(r.status).toBe(201);
  }
}

const countWhere = async (db: TestDatabase['db'], sql: string, params: unknown[] = []) =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;

describe('dispatcher claims', () => {
  let database: TestDatabase;
  let api: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startService({ role: 'api', database });
    t = await createTenant(api.url, { plan: 'pro' });
  });
  afterAll(async () => {
    await api.stop();
    await database.drop();
  });

  it('never gives one message to two concurrent claimers', async () => {
    await sendMany(api, t.sandboxKey, 'claim', 400);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => claimDue(database.db, `claimer-${i}`, 60, 30)),
    );
    const all = results.flat().map((m) => m.id);
    expect(all.length).toBe(400); // 8 claimers × 60 can hold them all
    expect(new Set(all).size).toBe(all.length);
    const again = await claimDue(database.db, 'late-claimer', 1000, 30);
    expect(again.map((m) => m.id).filter((id) => all.includes(id))).toEqual([]);
    expect(all.length + again.length).toBe(400);
    // Release everything for the next test.
    await database.db.query(`UPDATE messages SET locked_by = NULL, locked_until = NULL`);
  });

  it('re-claims a lease left by a dead worker once it expires, and not before', async () => {
    await database.db.query(`DELETE FROM messages`);
    await sendMany(api, t.sandboxKey, 'lease', 20);
    await database.db.query(
      `UPDATE messages SET status = 'queued', locked_by = 'dead-worker', locked_until = now() + interval '4 seconds'`,
    );
    const worker = await createApp(testConfig({ WORKER_POLL_MS: '100' }), {
      db: database.db,
      role: 'worker',
      log: pino({ level: 'silent' }),
    });
    await worker.start();
    try {
      // A message due beside them, and free: once the worker has sent it, its passes have looked at
      // the leased ones too and left them alone (no fixed wait). It goes again, for the counts below.
      await sendMany(api, t.sandboxKey, 'lease-free', 1);
      await eventually(
        async () =>
          (await countWhere(database.db, `messages WHERE external_id = 'lease-free-0' AND status = 'delivered'`)) === 1,
        15_000,
        20,
      );
      expect(await countWhere(database.db, `messages WHERE locked_by = 'dead-worker' AND status = 'queued'`)).toBe(20);
      await database.db.query(
        `DELETE FROM events WHERE data->>'messageId' IN (SELECT id::text FROM messages WHERE external_id = 'lease-free-0')`,
      );
      await database.db.query(`DELETE FROM messages WHERE external_id = 'lease-free-0'`);
      await eventually(
        async () => (await countWhere(database.db, `messages WHERE status = 'delivered'`)) === 20,
        15_000,
      );
      expect(await countWhere(database.db, `events WHERE data->>'status' = 'sent'`)).toBe(20);
    } finally {
      await worker.stop();
    }
  });

  it('two workers together process every message exactly once', async () => {
    await database.db.query(`DELETE FROM messages`);
    await database.db.query(`DELETE FROM events`);
    const workers = await Promise.all(
      [0, 1].map(() =>
        createApp(testConfig({ WORKER_BATCH_SIZE: '25' }), {
          db: database.db,
          role: 'worker',
          log: pino({ level: 'silent' }),
        }),
      ),
    );
    for (const w of workers) await w.start();
    try {
      await sendMany(api, t.sandboxKey, 'pair', 300, '+15551234588');
      await eventually(async () => (await countWhere(database.db, `messages WHERE status = 'read'`)) === 300, 30_000);
      for (const status of ['sent', 'delivered', 'read']) {
        expect(await countWhere(database.db, `events WHERE data->>'status' = $1`, [status])).toBe(300);
      }
      expect(await countWhere(database.db, `messages WHERE attempt_count <> 1`)).toBe(0);
    } finally {
      for (const w of workers) await w.stop();
    }
    expect(await countWhere(database.db, `messages WHERE locked_by IS NOT NULL`)).toBe(0);
  });
});

describe.runIf(backend === 'postgres')('worker processes on PostgreSQL', () => {
  let database: TestDatabase;
  let api: Service;
  const children: ChildProcess[] = [];

  const spawnWorker = () => {
    const child = spawn(process.execPath, chatgateArgs('serve', '--role', 'worker'), {
      env: {
        ...process.env,
        DATABASE_URL: database.url!,
        ENCRYPTION_KEY,
        LOG_LEVEL: 'warn',
        SANDBOX_STEP_MS: '50',
        WORKER_BATCH_SIZE: '20',
        WORKER_LEASE_SECONDS: '3',
        PROVIDER_TIMEOUT_MS: '500',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startService({ role: 'api', database });
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await api.stop();
    await database.drop();
  });

  it('two worker processes share the queue with no duplicate transition, and survive a kill -9', async () => {
    const t = await createTenant(api.url, { plan: 'pro' });
    const a = spawnWorker();
    spawnWorker();
    await sendMany(api, t.sandboxKey, 'proc', 200, '+15551234588');
    // Kill one worker hard while work remains; the other (and lease expiry) must finish everything.
    await eventually(async () => (await countWhere(database.db, `messages WHERE status <> 'pending'`)) > 0, 30_000);
    a.kill('SIGKILL');
    await sendMany(api, t.sandboxKey, 'proc-after', 100, '+15551234588');
    await eventually(
      async () => (await countWhere(database.db, `messages WHERE status = 'read'`)) === 300,
      60_000,
      200,
    );
    for (const status of ['sent', 'delivered', 'read']) {
      expect(await countWhere(database.db, `events WHERE data->>'status' = $1`, [status])).toBe(300);
    }
  });
});
