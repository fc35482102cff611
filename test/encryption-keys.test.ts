// ENCRYPTION_KEY on both backends: the database records which key its secrets are sealed with,
// so a process started with another key refuses to start (one line, exit 1) instead of failing
// every send later; a rotation (ENCRYPTION_KEY = new, ENCRYPTION_KEY_PREVIOUS = old, then
// `POST /admin/encryption/rekey` while the service runs) re-seals every secret, sends keep
// working throughout, and afterwards the old key can be dropped; and a sealed value copied into
// another row does not open there.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { runAdminCli } from '../src/admin/admin-cli.js';
import { keyOf, SEALED_COLUMNS, sealedAt } from '../src/secrets/sealed-columns.js';
import { createSealer, keyIdOf } from '../src/shared/crypto.js';
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
  type Service,
  startService,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { spawnChatgate } from './support/processes.js';
import { recordSecret } from './support/test-logs.js';

const KEY_A = ENCRYPTION_KEY;
const KEY_B = Buffer.alloc(32, 9).toString('base64');
const KEY_C = Buffer.alloc(32, 11).toString('base64');
recordSecret('encryption-key-b', KEY_B);
recordSecret('encryption-key-c', KEY_C);
const bytes = (key: string) => Buffer.from(key, 'base64');

/** A value sealed the way it was before key ids (v1: no key id, no associated data). */
function sealV1(key: string, plain: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', bytes(key), iv);
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', ...[iv, cipher.getAuthTag(), ct].map((b) => b.toString('base64url'))].join('.');
}

describe(`encryption keys: check at start, rotation with rekey, values bound to their row (${backend})`, () => {
  let emu: Emulator;
  let database: TestDatabase;
  const services: Service[] = [];
  const start = async (env: Record<string, string>) => {
    const svc = await startService({
      database,
      env: { ...providerEnv(emu), WORKER_POLL_MS: '50', UNSAFE_ALLOW_PRIVATE_URLS: 'true', ...env },
    });
    services.push(svc);
    return svc;
  };
  const stop = async (svc: Service) => {
    services.splice(services.indexOf(svc), 1);
    await svc.stop();
  };

  /** A customer with one live account (its own token, which the emulator insists on) and a key. */
  const tenant = async (url: string) => {
    const customer = await call(url, 'POST', '/admin/customers', { admin: true, body: { name: 'Keys', plan: 'pro' } });
    const phoneNumberId = `pnkey${crypto.randomBytes(5).toString('hex')}`;
    const token = `EAAG-${crypto.randomBytes(8).toString('hex')}`;
    recordSecret('account-token', token);
    const accountId = await createAccount(url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'wk', accessToken: token },
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      token,
      key: await createKey(url, customer.body.id, {}),
    };
  };
  let n = 0;
  const sendAndWait = async (url: string, key: string, status = 'sent') => {
    const res = await call(url, 'POST', '/messages', { key, body: textMessage(`k-${n++}`) });
    expect(res.status).toBe(201);
    const id = res.body.messageId as string;
    return eventually(async () => {
      const m = (await call(url, 'GET', `/messages/${id}`, { key })).body;
      return m.status === status || (status === 'sent' && m.status === 'delivered') ? m : undefined;
    }, 30_000);
  };

  beforeAll(async () => {
    emu = await startEmulator();
    await emu.settings({ enabled: false }); // no receipts: a send ends `sent`
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const svc of [...services]) await svc.stop();
    await database?.drop();
    await emu?.stop();
  });

  it('rotates while the service runs: sends keep working, rekey re-seals everything, then the old key can go', async () => {
    const first = await start({ ENCRYPTION_KEY: KEY_A });
    const t = await tenant(first.url);
    await emu.number(t.phoneNumberId, { accessToken: t.token });
    const endpoint = await call(first.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'http://127.0.0.1:9/hook', events: ['message.inbound'] },
    });
    expect(endpoint.status).toBe(201);
    recordSecret('webhook-secret', endpoint.body.secret);
    const rotated = await call(first.url, 'POST', `/webhook-endpoints/${endpoint.body.id}/rotate-secret`, {
      key: t.key,
    });
    expect(rotated.status).toBe(200);
    recordSecret('webhook-secret', rotated.body.secret);
    // A value sealed before key ids existed (v1), as an upgraded database holds them.
    await first.db.query('UPDATE chat_accounts SET app_secret_enc = $2 WHERE id = $1', [
      t.accountId,
      sealV1(KEY_A, 'legacy-app-secret'),
    ]);
    await sendAndWait(first.url, t.key);
    await stop(first);

    // Step 1: every process restarts with the new key and the old one as previous.
    const rotating = await start({ ENCRYPTION_KEY: KEY_B, ENCRYPTION_KEY_PREVIOUS: KEY_A });
    await sendAndWait(rotating.url, t.key); // the token sealed under the old key still opens
    // The old key may not be dropped before rekey has finished.
    await expect(start({ ENCRYPTION_KEY: KEY_B })).rejects.toThrow(
      `ENCRYPTION_KEY_PREVIOUS must be the previous key (id ${keyIdOf(bytes(KEY_A))})`,
    );

    // Step 2: rekey, with sends going on meanwhile.
    const sends = Promise.all(Array.from({ length: 10 }, () => sendAndWait(rotating.url, t.key)));
    const rekey = await call(rotating.url, 'POST', '/admin/encryption/rekey', { admin: true });
    expect(rekey.status).toBe(200);
    expect(rekey.body).toMatchObject({
      keyId: keyIdOf(bytes(KEY_B)),
      previousKeyId: null,
      remaining: 0,
      unreadable: 0,
    });
    // The account's two tokens, the API key's copy, the endpoint's secret and previous secret.
    expect(rekey.body.resealed).toBeGreaterThanOrEqual(5);
    await sends;
    // Again, with the operator command: nothing left to do.
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((text: string) => void printed.push(text));
    try {
      expect(await runAdminCli(['rekey'], { baseUrl: rotating.url, adminToken: ADMIN_TOKEN })).toBe(0);
    } finally {
      log.mockRestore();
    }
    expect(JSON.parse(printed.join('\n'))).toMatchObject({ resealed: 0, remaining: 0, previousKeyId: null });

    // Every sealed value is under the new key, in the new format, and opens with it alone.
    const newOnly = createSealer(bytes(KEY_B));
    let checked = 0;
    for (const c of SEALED_COLUMNS) {
      const rows = await rotating.db.query<{ id: string; v: string }>(
        `SELECT ${keyOf(c).column}::text AS id, ${c.column} AS v FROM ${c.table} WHERE ${c.column} IS NOT NULL`,
      );
      for (const r of rows) {
        expect(r.v.startsWith(`v2.${keyIdOf(bytes(KEY_B))}.`), `${c.table}.${c.column}`).toBe(true);
        newOnly.open(r.v, sealedAt(c, r.id));
        checked++;
      }
    }
    expect(checked).toBe(rekey.body.resealed);
    const [account] = await rotating.db.query<{ app_secret_enc: string }>(
      'SELECT app_secret_enc FROM chat_accounts WHERE id = $1',
      [t.accountId],
    );
    expect(
      newOnly.open(account!.app_secret_enc, { table: 'chat_accounts', column: 'app_secret_enc', id: t.accountId }),
    ).toBe('legacy-app-secret');
    await stop(rotating);

    // Step 3: the old key is gone; everything works with the new key alone.
    const after = await start({ ENCRYPTION_KEY: KEY_B });
    await sendAndWait(after.url, t.key);
    // A process still on the old key is refused, naming the variable.
    await expect(start({ ENCRYPTION_KEY: KEY_A })).rejects.toThrow(
      /^ENCRYPTION_KEY is not the key this database's secrets are sealed with/,
    );
    await stop(after);
  });

  it('the sealed-column list (key check, rekey) names every *_enc column of the schema', async () => {
    const rows = await database.db.query<{ t: string; c: string }>(
      `SELECT table_name AS t, column_name AS c FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name LIKE '%\\_enc' ORDER BY 1, 2`,
    );
    expect(rows.map((r) => `${r.t}.${r.c}`)).toEqual(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort());
  });

  it("a sealed token copied into another customer's account does not open there", async () => {
    const svc = await start({ ENCRYPTION_KEY: KEY_B });
    const victim = await tenant(svc.url);
    const attacker = await tenant(svc.url);
    // No token required by the emulator for the attacker's number: had the copied value opened,
    // the send would go out with the victim's token.
    await svc.db.query(
      'UPDATE chat_accounts SET access_token_enc = (SELECT access_token_enc FROM chat_accounts WHERE id = $1) WHERE id = $2',
      [victim.accountId, attacker.accountId],
    );
    const m = await sendAndWait(svc.url, attacker.key, 'failed');
    expect(m.error?.code).toBe('ACCOUNT_NOT_CONNECTED');
    expect(emu.sent().filter((s) => s.phoneNumberId === attacker.phoneNumberId)).toEqual([]);
    await stop(svc);
  });

  it('a worker started with another ENCRYPTION_KEY exits at once with one line naming the variable', async () => {
    // Its own database (PostgreSQL) or data folder (embedded), first opened with key A.
    const own = backend === 'postgres' ? await createTestDatabase() : null;
    const dataDir = own ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-keys-'));
    const env = (key: string) => ({
      ADMIN_TOKEN,
      ENCRYPTION_KEY: key,
      PORT: '0',
      HOST: '127.0.0.1',
      ...(own ? { DATABASE_URL: own.url! } : { DATABASE_URL: '', DATA_DIR: dataDir! }),
    });
    try {
      const api = spawnChatgate(['serve', '--role', 'api'], env(KEY_A), 'keys-api');
      await api.waitForLine((l) => l.msg === 'chatgate listening', 120_000);
      // The embedded database is one process's: the API stops first there.
      if (!own) {
        api.child.kill('SIGTERM');
        await api.exited;
      }
      const worker = spawnChatgate(['serve', '--role', 'worker'], env(KEY_C), 'keys-worker');
      let stderr = '';
      worker.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const { code } = await worker.exited;
      expect(code).toBe(1);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^ENCRYPTION_KEY is not the key this database's secrets are sealed with \(database key id [0-9a-f]{16}; ENCRYPTION_KEY has id [0-9a-f]{16}\)/,
      );
      if (own) {
        api.child.kill('SIGTERM');
        await api.exited;
      }
    } finally {
      await own?.drop();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000); // two processes, the first making a new embedded database (initdb): its 120 s wait above fits
});
