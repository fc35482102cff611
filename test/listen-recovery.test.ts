// PostgreSQL only: the LISTEN connection (one per process for every channel) is
// terminated by the server, as a failover, an idle-session killer or an operator would. The
// service must notice and listen again by itself: workers still wake on NOTIFY (the fallback poll
// is set to a minute here, so a missed wake-up shows as a stuck message), and the key directory
// drops its cache on reconnect, so a key revoked through another process while this one was
// deaf stops working here at once, not after the cache's 60 s safety net. PGlite has no
// connection to lose (its notifications are in-process).
import crypto from 'node:crypto';

import type { Sql } from 'postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPgListener, LISTEN_APPLICATION_NAME } from '../src/db/pg-listener.js';
import { openPostgresDb } from '../src/db/postgres-db.js';
import { startFaultProxy } from './support/fault-proxy.js';
import {
  backend,
  call,
  createTenant,
  createTestDatabase,
  eventually,
  type Service,
  startService,
  type TestDatabase,
  textMessage,
} from './support/harness.js';

const LISTEN_BACKENDS = `SELECT pid FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = '${LISTEN_APPLICATION_NAME}'`;

describe.skipIf(backend !== 'postgres')('losing the LISTEN connection (postgres)', () => {
  let database: TestDatabase;
  let svc: Service;
  let other: Service;
  let admin: Sql;
  // What the other process's LISTEN connection told its operator.
  const listenLog: { level: 'warn' | 'error'; msg: string }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // A fallback poll of a minute: within the waits below, only a NOTIFY can wake the dispatcher.
    const env = { WORKER_POLL_MS: '60000' };
    svc = await startService({ database, env });
    // The other API process has a pool (and a LISTEN connection) of its own, like a real second process.
    const otherDb = await openPostgresDb(database.url!, 4, {
      log: {
        warn: (_obj, msg) => void listenLog.push({ level: 'warn', msg }),
        error: (_obj, msg) => void listenLog.push({ level: 'error', msg }),
      },
    });
    other = await startService({
      database: { db: otherDb, url: database.url, drop: () => otherDb.close() },
      env,
      role: 'api',
    });
    admin = postgres(database.url!, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await admin?.end();
    await other?.stop();
    await other?.database.drop();
    await svc?.stop();
    await database?.drop();
  });

  const listeners = async () => (await admin.unsafe(LISTEN_BACKENDS)).map((r) => Number(r.pid));

  async function terminateListeners(meanwhile?: () => Promise<unknown>): Promise<void> {
    const before = await listeners();
    expect(before).toHaveLength(2); // one per process
    await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM (${LISTEN_BACKENDS}) l`);
    await meanwhile?.();
    // Each process listens again on a new connection of its own.
    await eventually(async () => {
      const now = await listeners();
      return now.length >= before.length && now.every((pid) => !before.includes(pid));
    }, 20_000);
  }

  async function delivered(url: string, key: string, externalId: string) {
    const sent = await call(url, 'POST', '/messages', { key, body: textMessage(externalId) });
    expect(sent.status).toBe(201);
    // Well under the 60 s fallback poll, so only a NOTIFY can have woken the dispatcher in time; 20 s
    // ran out once in CI on PostgreSQL at four files at a time (listening again backs off up to 5 s,
    // and the watchdog looks every 10 s).
    return eventually(async () => {
      const m = await call(url, 'GET', `/messages/${externalId}`, { key });
      return m.body.status === 'delivered' ? m.body : undefined;
    }, 40_000);
  }

  it('workers wake on NOTIFY again after the LISTEN connection is killed', async () => {
    const t = await createTenant(svc.url);
    await delivered(svc.url, t.sandboxKey, 'listen-before');
    await terminateListeners();
    // Accepted by the other process: only its NOTIFY, heard on the new LISTEN connection, wakes the dispatcher.
    await delivered(other.url, t.sandboxKey, 'listen-after-1');
    await delivered(other.url, t.sandboxKey, 'listen-after-2');
  }, 120_000);

  it('listens again when the first reconnects are refused (the server not taking connections for a while)', async () => {
    const t = await createTenant(svc.url);
    const url = new URL(database.url!);
    const dbName = url.pathname.slice(1);
    url.pathname = '/postgres'; // a database may not disallow connections from inside itself
    const server = postgres(url.toString(), { max: 1, onnotice: () => {} });
    // Existing connections stay; new ones to this database are refused until it is allowed again.
    await server.unsafe(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
    try {
      const before = await listeners();
      const logged = listenLog.length;
      await admin.unsafe(`SELECT pg_terminate_backend(pid) FROM (${LISTEN_BACKENDS}) l`);
      await eventually(async () => (await listeners()).every((pid) => !before.includes(pid)), 20_000);
      // A reconnect tried and refused meanwhile (the other process logs each), not a fixed second.
      await eventually(async () => listenLog.slice(logged).some((l) => l.level === 'error'), 20_000);
    } finally {
      await server.unsafe(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`);
      await server.end();
    }
    // Accepted by the other process: only a NOTIFY heard on a LISTEN made again wakes the dispatcher.
    await delivered(other.url, t.sandboxKey, 'listen-after-refusal-1');
    await delivered(other.url, t.sandboxKey, 'listen-after-refusal-2');
    // Each refused try was logged, and so was listening again: a deaf process is not a silent one.
    const tries = listenLog.map((l) => `${l.level}: ${l.msg}`);
    expect(tries).toContain('error: could not listen again; retrying');
    expect(tries.at(-1)).toBe('warn: listening again after losing the LISTEN connection');
  }, 120_000);

  it('the key directory drops its cache on reconnect: a key revoked while deaf stops working', async () => {
    const t = await createTenant(svc.url);
    const keys = await call(svc.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true });
    // The key is cached in the process that will not hear the revocation.
    expect((await call(svc.url, 'GET', '/chat-accounts', { key: t.sandboxKey })).status).toBe(200);
    const sandboxKeyId = (keys.body.apiKeys ?? keys.body).find((k: { sandbox: boolean }) => k.sandbox).id;

    // Deaf for a moment: the LISTEN connections are killed and the key revoked directly in the
    // database, which notifies nobody. Without the drop on reconnect, the cached key would work on.
    await terminateListeners(() =>
      admin.unsafe(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [sandboxKeyId]),
    );
    // The new connection shows in pg_stat_activity a moment before it has listened again (and the
    // cache been dropped): waited for, within far less than the cache's 60 s safety net.
    await eventually(
      async () => (await call(svc.url, 'GET', '/chat-accounts', { key: t.sandboxKey })).status === 401,
      10_000,
    );
  });
});

describe.skipIf(backend !== 'postgres')('a loss while listening again (postgres)', () => {
  it('a loss that comes with the answer to the repair’s LISTEN is repaired at once, not at the next watchdog check', async () => {
    const database = await createTestDatabase();
    const target = new URL(database.url!);
    const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const admin = postgres(database.url!, { max: 1, onnotice: () => {} });
    const logged: string[] = [];
    // The watchdog looks once a minute here: within the waits below, only a repair can listen again.
    const listener = createPgListener(proxy.via(database.url!), {
      checkEveryMs: 60_000,
      log: {
        warn: (_obj, msg) => void logged.push(`warn: ${msg}`),
        error: (_obj, msg) => void logged.push(`error: ${msg}`),
      },
    });
    const heard: string[] = [];
    let listened = 0;
    const terminate = () => admin.unsafe(`SELECT pg_terminate_backend(pid) FROM (${LISTEN_BACKENDS}) l`);
    /** Notifies until a notification is heard: the positive signal that the channel is listened. */
    const hears = (tag: string) =>
      eventually(async () => {
        await admin.unsafe(`NOTIFY listen_twice, '${tag}-${crypto.randomUUID()}'`);
        return heard.some((p) => p.startsWith(`${tag}-`));
      }, 20_000);
    try {
      await listener.listen(
        'listen_twice',
        (payload) => heard.push(payload),
        () => listened++,
      );
      await hears('before');
      // The next connection's answer to LISTEN is held until its backend is terminated too, and
      // handed over with the server's goodbye in one read: lost again as the repair finishes.
      let caught = false;
      proxy.setMode({
        kind: 'joinBeforeClose',
        from: Buffer.from('LISTEN\0'),
        onHeld: () => {
          caught = true;
          terminate().then(
            () => {},
            () => {},
          );
        },
      });
      await terminate();
      await eventually(async () => caught, 20_000);
      // Well under the minute of the watchdog: the second loss is repaired by itself.
      await hears('after');
      expect(listened).toBe(3); // the first LISTEN, the repair the second loss cut short, the one after
      expect(logged.filter((l) => l === 'warn: listening again after losing the LISTEN connection')).toHaveLength(2);
      expect(proxy.counts().total).toBe(3);
    } finally {
      await listener.close();
      await admin.end();
      await proxy.close();
      await database.drop();
    }
  }, 60_000);
});
