// The set-up of the benchmarks that send through the provider: a fresh PostgreSQL database, the
// emulator (receipts off) and an API process, each in its own process; the scenario starts its
// worker processes with `startWorker`. Also the operator calls they share.
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import postgres from 'postgres';

import { createDatabase } from './databases.js';
import { type Child, freePort, startTs, stop, waitHealthy } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ADMIN_TOKEN = crypto.randomBytes(24).toString('hex');
export const ENCRYPTION_KEY = crypto.randomBytes(32).toString('base64');
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A JSON request that must succeed; answers the parsed body (null when empty). */
export async function json(url: string, init: RequestInit & { body?: string } = {}) {
  const headers = {
    ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(init.headers ?? {}),
  };
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A Pro customer with one account paced at `mps` (and the emulator's limit for it, when given). */
export async function benchAccount(apiUrl: string, emuUrl: string | null, mps: number) {
  const customer = await json(`${apiUrl}/admin/customers`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'bench', plan: 'pro' }),
  });
  const phoneNumberId = `bench${crypto.randomBytes(5).toString('hex')}`;
  await json(`${apiUrl}/admin/customers/${customer.id}/chat-accounts`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({
      type: 'OFFICIAL',
      phoneNumber: '+15550100200',
      displayName: 'b',
      official: { phoneNumberId, wabaId: 'w', accessToken: 't' },
      throughputMps: mps,
    }),
  });
  if (emuUrl)
    await json(`${emuUrl}/__emulator/numbers/${phoneNumberId}`, {
      method: 'PUT',
      body: JSON.stringify({ throughputMps: mps }),
    });
  const key = (
    await json(`${apiUrl}/admin/customers/${customer.id}/api-keys`, { method: 'POST', headers: admin, body: '{}' })
  ).key as string;
  return { phoneNumberId, key };
}

export type LiveStack = Awaited<ReturnType<typeof startLiveStack>>;

/** `env` is added to the API's and the workers' settings. */
export async function startLiveStack(opts: { adminUrl: string; env?: Record<string, string> }) {
  const db = await createDatabase('postgres', opts.adminUrl);
  const sql = postgres(db.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
  const emuPort = await freePort();
  const apiPort = await freePort();
  const emu = startTs('emulator', path.join(here, 'serve-emulator.ts'), {
    PORT: String(emuPort),
    EMULATOR_LATENCY_MS: '100',
  });
  const emuUrl = `http://127.0.0.1:${emuPort}`;
  const common = {
    ...db.env,
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    PROVIDER_BASE_URL: emuUrl,
    LOG_LEVEL: 'warn',
    DB_POOL_SIZE: '10',
    ...opts.env,
  };
  const api = startTs('chatgate-api', path.join(here, 'serve-chatgate.ts'), { ...common, PORT: String(apiPort) });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const workers = new Set<Child>();
  const close = async () => {
    for (const w of workers) await stop(w);
    await stop(api);
    await stop(emu);
    await sql.end({ timeout: 1 });
    await db.drop();
  };
  try {
    await waitHealthy(emu, emuUrl);
    await waitHealthy(api, apiUrl);
    await json(`${emuUrl}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ enabled: false }) }); // no receipts
  } catch (err) {
    await close();
    throw err;
  }
  return {
    sql,
    emuUrl,
    apiUrl,
    startWorker(nodeArgs: string[] = []): Child {
      const w = startTs(
        'chatgate-worker',
        path.join(here, 'serve-chatgate.ts'),
        { ...common, BENCH_ROLE: 'worker' },
        nodeArgs,
      );
      workers.add(w);
      void w.exited.then(() => workers.delete(w));
      return w;
    },
    close,
  };
}
