// Graceful shutdown of a real `chatgate serve` process under load: SIGTERM while live messages
// stream in and sends are in flight. Nothing accepted is lost, every send the provider took is
// recorded, no lease is left behind, and after a restart everything goes out exactly once.
// On PostgreSQL and on the embedded database (which the test opens only while no process runs).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../src/config.js';
import type { Db } from '../src/db/db.js';
import { openDb } from '../src/db/open-db.js';
import { type Emulator, providerEnv, startEmulator } from './support/emulator.js';
import {
  ADMIN_TOKEN,
  backend,
  call,
  createAccount,
  createKey,
  createTestDatabase,
  ENCRYPTION_KEY,
  eventually,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';

type Row = { id: string; external_id: string; status: string; provider_message_id: string | null };

describe(`graceful shutdown under load (${backend})`, () => {
  let emu: Emulator;
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  const running: ChatgateProcess[] = [];

  const env = () => ({
    ...providerEnv(emu),
    PROVIDER_TIMEOUT_MS: '10000', // a send slower than this would be retried: a duplicate not caused by shutdown
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    PORT: '0',
    HOST: '127.0.0.1',
    WORKER_POLL_MS: '50',
    SHUTDOWN_TIMEOUT_MS: '60000',
    ...(database ? { DATABASE_URL: database.url! } : { DATABASE_URL: '', DATA_DIR: dataDir! }),
  });
  const start = (role: 'all' | 'worker', extra: Record<string, string> = {}) => {
    const p = spawnChatgate(['serve', '--role', role], { ...env(), ...extra }, role);
    running.push(p);
    return p;
  };
  /** The database, while no chatgate process holds it (PGlite is one process at a time). */
  const withDb = async <T>(fn: (db: Db) => Promise<T>): Promise<T> => {
    if (database) return fn(database.db);
    const db = await openDb(loadConfig({ DATA_DIR: dataDir! }));
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  const stopAndWait = async (p: ChatgateProcess) => {
    p.child.kill('SIGTERM');
    return p.exited;
  };

  beforeAll(async () => {
    emu = await startEmulator({ latencyMs: 150 });
    await emu.settings({ enabled: false }); // no receipts: the final state of a send is `sent`
    if (backend === 'postgres') database = await createTestDatabase();
    else dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-shutdown-'));
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await emu?.stop();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM mid-load: every accepted message kept, no lease held, each sent exactly once after a restart', async () => {
    const first = start('all');
    const url = (await first.waitForLine((l) => l.msg === 'chatgate listening', 120_000)).address as string;

    const customer = await call(url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Shutdown', plan: 'pro' },
    });
    const phoneNumberId = `pnsig${Date.now()}`;
    // 50 a second: the worker books send slots ahead, so SIGTERM finds sends waiting for their
    // slot (handed back) as well as sends in flight at the provider (finished and recorded).
    await createAccount(url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w', accessToken: 'EAAG-shutdown-token' },
      throughputMps: 50,
    });
    await emu.number(phoneNumberId, { throughputMps: 1000 });
    const key = await createKey(url, customer.body.id, {});

    // Eight clients sending one message after another until the server stops answering.
    const accepted = new Set<string>();
    const refusals: number[] = [];
    let next = 0;
    const client = async () => {
      for (;;) {
        const externalId = `sig-${next++}`;
        try {
          const r = await call(url, 'POST', '/messages', {
            key,
            body: textMessage(externalId, { content: { type: 'text', text: externalId } }),
          });
          if (r.status === 201) accepted.add(externalId);
          else refusals.push(r.status);
        } catch {
          return; // the server is gone (connection refused or reset): whether this one was kept is unknown
        }
      }
    };
    const load = Array.from({ length: 8 }, client);
    await eventually(async () => accepted.size >= 200 && emu.sent().length >= 20, 120_000, 20);

    const sentBeforeTerm = emu.sent().length;
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    await Promise.all(load);
    expect(first.lines.some((l) => l.msg === 'shutting down')).toBe(true);
    expect(first.lines.filter((l) => (l.level ?? 0) >= 50)).toEqual([]); // no error or fatal line
    // Requests that arrived while closing were refused as unavailable, nothing else.
    expect(refusals.every((s) => s === 503)).toBe(true);

    const atExit = await withDb(async (db) => ({
      rows: await db.query<Row>(
        `SELECT id, external_id, status, provider_message_id FROM messages WHERE customer_id = $1`,
        [customer.body.id],
      ),
      leased: await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM messages WHERE locked_by IS NOT NULL OR locked_until > now()`,
      ),
      deliveriesLeased: await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE locked_by IS NOT NULL OR locked_until > now()`,
      ),
    }));
    const byExternalId = new Map(atExit.rows.map((r) => [r.external_id, r]));
    for (const id of accepted) expect(byExternalId.has(id), `accepted ${id} is kept`).toBe(true);
    expect(atExit.leased[0]!.n).toBe(0);
    expect(atExit.deliveriesLeased[0]!.n).toBe(0);
    // Every send the provider took before the process ended is recorded as sent, with its wamid.
    const sendsAtExit = emu.sent().filter((s) => s.phoneNumberId === phoneNumberId);
    expect(sendsAtExit.length).toBeGreaterThanOrEqual(sentBeforeTerm);
    const byId = new Map(atExit.rows.map((r) => [r.id, r]));
    for (const s of sendsAtExit) {
      expect(byId.get(s.messageId!), `send of ${s.messageId} recorded`).toMatchObject({
        status: 'sent',
        provider_message_id: s.wamid,
      });
    }
    // The shutdown left work behind for the next worker (else this test proves little).
    expect(atExit.rows.filter((r) => r.status !== 'sent').length).toBeGreaterThan(0);

    // A worker picks up the rest; its status server answers meanwhile.
    const second = start('worker', { WORKER_STATUS_PORT: '0' });
    const statusUrl = (await second.waitForLine((l) => l.msg === 'worker status listening', 120_000)).address as string;
    expect(await call(statusUrl, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
    await eventually(
      async () =>
        new Set(
          emu
            .sent()
            .filter((s) => s.phoneNumberId === phoneNumberId)
            .map((s) => s.messageId),
        ).size >= atExit.rows.length,
      120_000,
      100,
    );
    expect(await stopAndWait(second)).toEqual({ code: 0, signal: null });

    const final = await withDb((db) =>
      db.query<Row & { attempt_count: number; locked: boolean }>(
        `SELECT id, external_id, status, provider_message_id, attempt_count,
                (locked_by IS NOT NULL OR COALESCE(locked_until > now(), false)) AS locked
           FROM messages WHERE customer_id = $1`,
        [customer.body.id],
      ),
    );
    expect(final).toHaveLength(atExit.rows.length);
    const sends = emu.sent().filter((s) => s.phoneNumberId === phoneNumberId);
    expect(sends).toHaveLength(final.length); // exactly once each: no duplicate at the provider
    const sendOf = new Map(sends.map((s) => [s.messageId, s]));
    for (const m of final) {
      expect(m).toMatchObject({ status: 'sent', provider_message_id: sendOf.get(m.id)?.wamid, locked: false });
      expect((sendOf.get(m.id)?.payload.text as { body: string }).body).toBe(m.external_id);
    }
  }, 600_000);

  it('SIGTERM with a stalled upload in flight: exits cleanly without waiting for BODY_READ_TIMEOUT_MS', async () => {
    // Ten minutes to read a body, one minute before a forced exit (code 1): before the fix the
    // server's close waited for the stalled upload, and only the forced exit ended the process.
    const p = start('all', { BODY_READ_TIMEOUT_MS: '600000', SHUTDOWN_TIMEOUT_MS: '60000' });
    const url = (await p.waitForLine((l) => l.msg === 'chatgate listening', 120_000)).address as string;
    const customer = await call(url, 'POST', '/admin/customers', { admin: true, body: { name: 'Stall', plan: 'pro' } });
    const key = await createKey(url, customer.body.id, {});
    const { port } = new URL(url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const boundary = 'stall';
    socket.write(
      `POST /media HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${key}\r\n` +
        `content-type: multipart/form-data; boundary=${boundary}\r\ncontent-length: 1000000\r\n\r\n` +
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.pdf"\r\n` +
        `content-type: application/pdf\r\n\r\n%PDF-1.4\n`,
    );
    socket.on('error', () => {}); // the server cuts it
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise((r) => setTimeout(r, 500)); // the upload is being read
    const bound = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000));
    expect(await Promise.race([stopAndWait(p), bound])).toEqual({ code: 0, signal: null });
    await closed;
  }, 180_000);
});
