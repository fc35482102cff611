// Starts the real service on loopback over a fresh database: PGlite in memory by default, or a
// new PostgreSQL database when DATABASE_URL is set (created here, dropped on close).
import crypto from 'node:crypto';

import pg from 'pg';

import { type App, createApp, createLogger, type Role } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { openPgliteDb } from '../../src/db/pglite-db.js';
import { openPostgresDb } from '../../src/db/postgres-db.js';
import type { Resolve } from '../../src/outbound/outbound-client.js';
import { quotaMonth } from '../../src/plans/plans.js';
import { checkAgainstDocument } from './openapi-check.js';
import { newPgliteDataDir } from './pglite-template.js';
import { postgresTemplate } from './postgres-template.js';
import { installClockPglite, installClockPostgres, type TestClock, testClock } from './test-clock.js';
import { logDestination, recordSecret, recordSecretsIn } from './test-logs.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
export const serverUrl = process.env.DATABASE_URL ?? null;
export const backend = serverUrl ? 'postgres' : 'pglite';
recordSecret('admin-token', ADMIN_TOKEN);
recordSecret('encryption-key', ENCRYPTION_KEY);

export type TestDatabase = { db: Db; url: string | null; drop(): Promise<void>; clock?: TestClock };

/**
 * A fresh database for one test file, with every migration applied (a copy of the run's template:
 * test/support/pglite-template.ts, postgres-template.ts), or, with `empty`, as initdb leaves it.
 * PGlite runs on the test's own thread unless `thread` (or EMBEDDED_DB_THREAD=true in the test
 * run's environment) puts it in a thread of its own. With `clock`, the tests' clock
 * (test/support/test-clock.ts) runs the database's now() and the process's Date: `clock.advance`.
 */
export async function createTestDatabase(
  opts: { thread?: boolean; empty?: boolean; clock?: boolean } = {},
): Promise<TestDatabase & { name?: string }> {
  const thread = opts.thread ?? process.env.EMBEDDED_DB_THREAD === 'true';
  if (!serverUrl) {
    const from = await newPgliteDataDir(opts.empty ? 'empty' : 'migrated');
    const db = await openPgliteDb(null, { thread, from });
    if (opts.clock) await installClockPglite(db);
    return { db, url: null, drop: () => db.close(), clock: opts.clock ? testClock(db, !thread) : undefined };
  }
  const name = `chatgate_test_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const template = opts.empty ? null : postgresTemplate();
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (opts.clock) {
    const inside = new pg.Client({ connectionString: url.toString() });
    await inside.connect();
    await installClockPostgres(inside, admin, name).finally(() => inside.end());
  }
  const db = await openPostgresDb(url.toString(), 10);
  return {
    db,
    url: url.toString(),
    name,
    clock: opts.clock ? testClock(db, false) : undefined,
    async drop() {
      await db.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    DATA_DIR: '/nonexistent-chatgate-test-dir',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SANDBOX_STEP_MS: '50',
    // The product's default: every worker wakes on NOTIFY, and the poll is only its fallback (a
    // lease that ran out, a missed wake-up); at 200 ms an idle service cost ~65 ms CPU a second on
    // PGlite, five loops polling. Tests that wait on the fallback set their own.
    WORKER_POLL_MS: '1000',
    RETRY_TIME_SCALE: '0.001',
    PUBLIC_BASE_URL: 'https://chatgate.test',
    // Nothing listens there: tests that send live start an emulator and point here themselves.
    PROVIDER_BASE_URL: 'http://127.0.0.1:9',
    ...overrides,
  });
}

export type Service = {
  url: string;
  app: App;
  db: Db;
  database: TestDatabase;
  config: Config;
  /** With `startService({ clock: true })` (or a database made with one): the tests' clock. */
  clock?: TestClock;
  stop(): Promise<void>;
};

/** The whole service (API and workers unless a role is given) on a fresh database. */
export async function startService(
  opts: { env?: Record<string, string>; role?: Role; database?: TestDatabase; resolve?: Resolve; clock?: boolean } = {},
): Promise<Service> {
  const config = testConfig(opts.env);
  // EMBEDDED_DB_THREAD among a test's settings opens its database that way.
  const thread = opts.env?.EMBEDDED_DB_THREAD === undefined ? undefined : config.embeddedDbThread;
  const database = opts.database ?? (await createTestDatabase({ thread, clock: opts.clock }));
  for (const name of ['PROVIDER_APP_SECRET', 'PROVIDER_VERIFY_TOKEN', 'ADMIN_TOKEN'] as const)
    recordSecret(name.toLowerCase().replaceAll('_', '-'), opts.env?.[name]);
  // Logged at info to a file of the run (TEST_LOG_LEVEL also shows them), with the service's own
  // logger and its redaction: the run's end checks that no secret a test created shows there.
  const logs = logDestination(opts.role ?? 'all');
  const app = await createApp(config, {
    db: database.db,
    role: opts.role ?? 'all',
    log: createLogger({ logLevel: logs.level }, logs.stream),
    resolve: opts.resolve,
    checkResponses: true,
  });
  const address = await app.start();
  return {
    url: address ?? '',
    app,
    db: database.db,
    database,
    config,
    clock: database.clock,
    async stop() {
      try {
        await app.stop();
        if (!opts.database) await database.drop();
      } finally {
        logs.close();
      }
    },
  };
}

export type Reply<T = any> = { status: number; body: T; headers: Headers };

export async function call<T = any>(
  url: string,
  method: string,
  path: string,
  opts: { key?: string; admin?: boolean; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key !== undefined) headers['x-api-key'] = opts.key;
  if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  recordSecretsIn(opts.body, 'request');
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  // Every answer a test receives through call() must be one the OpenAPI document describes.
  await checkAgainstDocument(url, method, path, {
    status: res.status,
    body: parsed,
    contentType: res.headers.get('content-type'),
  });
  recordSecretsIn(parsed, 'answer');
  return { status: res.status, body: parsed as T, headers: res.headers };
}

let phoneCounter = 0;
const uniquePhoneNumberId = () => `pn${Date.now()}${phoneCounter++}${crypto.randomBytes(3).toString('hex')}`;

export type Tenant = { customerId: string; accountId: string; key: string; sandboxKey: string };

/** A customer with one OFFICIAL account, a live key and a sandbox key, all through the operator API. */
export async function createTenant(
  url: string,
  opts: { plan?: string; defaultCountry?: string; accounts?: number } = {},
): Promise<Tenant & { accountIds: string[] }> {
  const customer = await call(url, 'POST', '/admin/customers', {
    admin: true,
    body: { name: 'Test Co', plan: opts.plan ?? 'pro', defaultCountry: opts.defaultCountry ?? 'US' },
  });
  if (customer.status !== 201) throw new Error(`customer: ${customer.status} ${JSON.stringify(customer.body)}`);
  const customerId = customer.body.id as string;
  const accountIds: string[] = [];
  for (let i = 0; i < (opts.accounts ?? 1); i++) accountIds.push(await createAccount(url, customerId));
  const key = await createKey(url, customerId, {});
  const sandboxKey = await createKey(url, customerId, { sandbox: true });
  return { customerId, accountId: accountIds[0]!, accountIds, key, sandboxKey };
}

export async function createAccount(
  url: string,
  customerId: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await call(url, 'POST', `/admin/customers/${customerId}/chat-accounts`, {
    admin: true,
    body: {
      type: 'OFFICIAL',
      phoneNumber: '+15550100200',
      displayName: 'Test account',
      official: { phoneNumberId: uniquePhoneNumberId(), wabaId: 'waba1', accessToken: 'EAAG-secret-token' },
      ...body,
    },
  });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export async function createKey(url: string, customerId: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(url, 'POST', `/admin/customers/${customerId}/api-keys`, { admin: true, body });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.key as string;
}

/** Sets this month's quota counter of a customer (to bring it near its limit without sending). */
export async function setQuotaUsed(db: Pick<Db, 'query'>, customerId: string, used: number): Promise<void> {
  await db.query(
    `INSERT INTO quota_usage (customer_id, month, used) VALUES ($1, $2::date, $3)
     ON CONFLICT (customer_id, month) DO UPDATE SET used = EXCLUDED.used`,
    [customerId, quotaMonth(new Date()).month, used],
  );
}

export function textMessage(externalId: string, extra: Record<string, unknown> = {}) {
  return {
    externalId,
    to: { type: 'phone', phoneE164: '+15551230000' },
    content: { type: 'text', text: 'hello' },
    ...extra,
  };
}

/**
 * Polls GET /messages/{id} for every id until all are delivered (their bodies, in order); a failed
 * one is named in the timeout's error.
 */
export function allDelivered(url: string, key: string, ids: string[], timeoutMs: number): Promise<any[]> {
  return eventually(async () => {
    const ms = await Promise.all(ids.map(async (id) => (await call(url, 'GET', `/messages/${id}`, { key })).body));
    const failed = ms.find((m) => m.status === 'failed');
    if (failed) throw new Error(`failed: ${JSON.stringify(failed)}`);
    return ms.every((m) => m.status === 'delivered') ? ms : undefined;
  }, timeoutMs);
}

/** Polls until check returns a value (not undefined/false) or the deadline passes. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  // The monotonic clock: the tests' clock (test-clock.ts) moves Date, not this wait.
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
