// EMBEDDED_DB_THREAD=true (decision 0058): PGlite in a worker thread of its own behaves as PGlite on
// the main thread does, through the same Db seam and through the whole service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ConfigError } from '../src/config.js';
import type { Db } from '../src/db/db.js';
import { openPgliteDb } from '../src/db/pglite-db.js';
import {
  backend,
  call,
  createTenant,
  eventually,
  type Service,
  startService,
  testConfig,
  textMessage,
} from './support/harness.js';

const VALUES = `SELECT now()::timestamptz AS at, '2026-01-02'::date AS day, 42::int AS n, 7::bigint AS big,
  1.5::numeric AS dec, '{"a":[1,"x",null]}'::jsonb AS doc, '\\x0102ff'::bytea AS bin, NULL::text AS nothing,
  ARRAY['a','b'] AS list, true AS yes`;

describe('EMBEDDED_DB_THREAD', () => {
  it('is on unless set false', () => {
    expect(testConfig().embeddedDbThread).toBe(true);
    expect(testConfig({ EMBEDDED_DB_THREAD: 'false' }).embeddedDbThread).toBe(false);
    expect(testConfig({ EMBEDDED_DB_THREAD: 'true' }).embeddedDbThread).toBe(true);
    expect(() => testConfig({ EMBEDDED_DB_THREAD: 'maybe' })).toThrow(ConfigError);
  });
});

describe.skipIf(backend !== 'pglite')('PGlite in its own thread: the Db seam', () => {
  let db: Db;
  let here: Db;
  beforeAll(async () => {
    [db, here] = await Promise.all([openPgliteDb(null, { thread: true }), openPgliteDb(null)]);
    await db.exec('CREATE TABLE t (k text PRIMARY KEY, v int NOT NULL)');
  });
  afterAll(async () => {
    await here.close();
    await db.close();
  });

  it('returns the same JavaScript values as PGlite on the main thread', async () => {
    const [[a], [b]] = await Promise.all([db.query(VALUES), here.query(VALUES)]);
    expect(Object.keys(a!)).toEqual(Object.keys(b!));
    for (const key of Object.keys(b!)) {
      if (key === 'at') continue;
      expect(a![key], key).toEqual(b![key]);
      expect(a![key]?.constructor, key).toBe(b![key]?.constructor);
    }
    expect(a!.at).toBeInstanceOf(Date);
    expect(a!.day).toBeInstanceOf(Date);
    expect(a!.doc).toEqual({ a: [1, 'x', null] });
    expect(a!.bin).toBeInstanceOf(Uint8Array);
    // Parameters go the other way: a Buffer, a Date and an object arrive as such.
    const [r] = await db.query<{ bin: Uint8Array; at: Date; doc: unknown }>(
      'SELECT $1::bytea AS bin, $2::timestamptz AS at, $3::jsonb AS doc',
      [Buffer.from([1, 2, 3]), new Date('2026-03-04T05:06:07.089Z'), { x: 1 }],
    );
    expect([...r!.bin]).toEqual([1, 2, 3]);
    expect(r!.at.toISOString()).toBe('2026-03-04T05:06:07.089Z');
    expect(r!.doc).toEqual({ x: 1 });
  });

  it('commits a transaction, and rolls one back when its function throws, with the error as thrown', async () => {
    await expect(
      db.transaction(async (tx) => (await tx.query('INSERT INTO t VALUES ($1, 1) RETURNING k', ['a'])).length),
    ).resolves.toBe(1);
    const mine = new Error('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO t VALUES ('b', 2)");
        throw mine;
      }),
    ).rejects.toBe(mine);
    expect(await db.query('SELECT k FROM t ORDER BY k')).toEqual([{ k: 'a' }]);
  });

  it('keeps PostgreSQL error fields: a unique violation inside a transaction rolls it back with its code', async () => {
    const err = await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO t VALUES ('c', 3)");
        await tx.query("INSERT INTO t VALUES ('a', 4)");
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '23505', constraint: 't_pkey', table: 't', severity: 'ERROR' });
    expect((err as Error).message).toMatch(/duplicate key/);
    expect(await db.query('SELECT k FROM t ORDER BY k')).toEqual([{ k: 'a' }]);
    // And outside a transaction.
    await expect(db.query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    await expect(db.exec('SELEC 1')).rejects.toMatchObject({ code: '42601' });
  });

  it('makes statements outside a transaction wait until it ends', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inserted!: () => void;
    const insertedOnce = new Promise<void>((r) => (inserted = r));
    const tx = db.transaction(async (q) => {
      await q.query("UPDATE t SET v = 10 WHERE k = 'a'");
      inserted();
      await held;
    });
    await insertedOnce;
    let seen: unknown = null;
    const outside = db.query<{ v: number }>("SELECT v FROM t WHERE k = 'a'").then((rows) => (seen = rows[0]!.v));
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toBeNull();
    expect(db.stats()).toMatchObject({ size: 1, inUse: 1, waiting: 1 });
    release();
    await tx;
    await outside;
    expect(seen).toBe(10);
  });

  it('forwards NOTIFY, sent after commit by notifyAfterCommit, and stops after unsubscribing', async () => {
    const got: string[] = [];
    const unsubscribe = await db.listen('wake', (p) => got.push(p));
    await db.transaction(async (tx) => {
      await tx.query("UPDATE t SET v = v + 1 WHERE k = 'a'");
      tx.notifyAfterCommit!('wake');
    });
    await eventually(async () => got.length === 1);
    await db.query("SELECT pg_notify('wake', 'hello')");
    await eventually(async () => got.length === 2);
    expect(got).toEqual(['', 'hello']);
    await unsubscribe();
    await db.query("SELECT pg_notify('wake', 'again')");
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(2);
  });

  it('fails a call whose parameters cannot cross to the thread, and goes on', async () => {
    await expect(db.query('SELECT $1::text AS x', [() => 1])).rejects.toThrow(/could not be cloned/);
    expect(await db.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });

  it('closes: the thread ends and later calls fail', async () => {
    const other = await openPgliteDb(null, { thread: true });
    expect(await other.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await other.close();
    await expect(other.query('SELECT 1')).rejects.toThrow(/thread exited/);
  });
});

describe.skipIf(backend !== 'pglite')('PGlite in its own thread: the service', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ env: { EMBEDDED_DB_THREAD: 'true' } });
    t = await createTenant(svc.url, { plan: 'basic' });
  });
  afterAll(() => svc.stop());

  it('accepts a message, and a sandbox one goes to delivered with its events', async () => {
    expect(svc.config.embeddedDbThread).toBe(true);
    const sent = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('thread-live') });
    expect(sent.status).toBe(201);
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.sandboxKey,
      body: { ...textMessage('thread-sb'), to: { type: 'phone', phoneE164: '+15551234588' } },
    });
    expect(res.status).toBe(201);
    const id = res.body.messageId as string;
    const m = await eventually(async () => {
      const got = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).body;
      return got.status === 'read' ? got : undefined;
    });
    expect(Date.parse(m.sentAt)).toBeLessThanOrEqual(Date.parse(m.deliveredAt));
    const events = await svc.db.query<{ data: { status: string }; created_at: Date }>(
      `SELECT data, created_at FROM events WHERE data->>'messageId' = $1 ORDER BY created_at`,
      [id],
    );
    expect(events.map((e) => e.data.status)).toEqual(['sent', 'delivered', 'read']);
    expect(events[0]!.created_at).toBeInstanceOf(Date);
  });

  it('answers 409 for a second account with the same phoneNumberId (a unique violation in a transaction)', async () => {
    const body = {
      type: 'OFFICIAL',
      phoneNumber: '+15550100201',
      displayName: 'Twice',
      official: { phoneNumberId: `pnid-thread-${Date.now()}`, wabaId: 'w', accessToken: 't' },
    };
    const path = `/admin/customers/${t.customerId}/chat-accounts`;
    expect((await call(svc.url, 'POST', path, { admin: true, body })).status).toBe(201);
    const dup = await call(svc.url, 'POST', path, { admin: true, body });
    expect(dup).toMatchObject({ status: 409, body: { error: 'already_exists' } });
  });
});
