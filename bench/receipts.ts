// The receipt path alone: N messages already `sent` (10 customers, each with a message.status
// endpoint), then signed provider receipts posted at the API like the emulator does (one status
// per POST, sent → delivered → read in order for each message, 64 messages in flight) and
// receipts/s measured from outside. Each tree given runs on each backend, so a before/after
// comparison shares one run:
//
//   npx tsx bench/receipts.ts [--messages=2000] [--backends=postgres,pglite] [--trees=/work/main,.]
//
// The API role only (no dispatcher, no deliverer): the deliveries are written, not sent.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

import { type Backend, createDatabase } from './databases.js';
import { freePort, startTs, stop, stopAll, waitHealthy } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const APP_SECRET = 'bench-receipts-secret';
const ADMIN_TOKEN = crypto.randomBytes(24).toString('hex');
const CUSTOMERS = 10;
const IN_FLIGHT = 64;

type Target = { phoneNumberId: string; wamid: string };

/** The load generator (its own process): 64 lanes, each posting one message's receipts in order. */
async function load() {
  const targets = JSON.parse(fs.readFileSync(process.env.TARGETS_FILE!, 'utf8')) as Target[];
  const url = process.env.TARGET!;
  const at = String(Math.floor(Date.now() / 1000));
  const post = (t: Target, status: string) => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'waba',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: t.phoneNumberId },
                statuses: [{ id: t.wamid, status, timestamp: at, recipient_id: '15551230000' }],
              },
            },
          ],
        },
      ],
    });
    const signature = `sha256=${crypto.createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;
    return { body, signature };
  };
  const requests = targets.map((t) => ['sent', 'delivered', 'read'].map((s) => post(t, s)));
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < requests.length) {
        for (const r of requests[next++]!) {
          const t0 = performance.now();
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-hub-signature-256': r.signature },
            body: r.body,
          });
          await res.arrayBuffer();
          if (res.status !== 200) errors++;
          latencies.push(performance.now() - t0);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.floor((latencies.length - 1) * p)]! * 10) / 10;
  console.log(
    JSON.stringify({
      receipts: latencies.length,
      seconds: Math.round(seconds * 100) / 100,
      receiptsPerSecond: Math.round(latencies.length / seconds),
      messagesPerSecond: Math.round(targets.length / seconds),
      p50: pct(0.5),
      p99: pct(0.99),
      errors,
    }),
  );
}

/** Runs SQL against the bench database while no server holds it (PGlite: one process at a time). */
async function withSql<T>(env: Record<string, string>, fn: (q: (text: string) => Promise<any[]>) => Promise<T>) {
  if (env.DATABASE_URL) {
    const sql = postgres(env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      return await fn((text) => sql.unsafe(text));
    } finally {
      await sql.end({ timeout: 1 });
    }
  }
  const db = await PGlite.create(path.join(env.DATA_DIR!, 'pgdata'));
  try {
    return await fn(async (text) => (await db.query(text)).rows);
  } finally {
    await db.close();
  }
}

async function scenario(tree: string, backend: Backend, messages: number) {
  const db = await createDatabase(backend, adminUrl);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...db.env,
    PORT: String(port),
    ADMIN_TOKEN,
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
    PROVIDER_APP_SECRET: APP_SECRET,
    UNSAFE_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
  };
  const prof = process.env.BENCH_CPU_PROF; // a directory: the receipts phase's server is profiled
  const serve = (profile = false) =>
    startTs(
      'chatgate',
      path.join(tree, 'bench', 'serve-chatgate.ts'),
      env,
      profile && prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
    );
  try {
    // 1. Customers, accounts, endpoints and accepted messages through the API.
    let api = serve();
    await waitHealthy(api, url);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const json = async (method: string, p: string, headers: Record<string, string>, body: unknown) => {
      const res = await fetch(`${url}${p}`, { method, headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    const tenants: { key: string; phoneNumberId: string }[] = [];
    for (let c = 0; c < CUSTOMERS; c++) {
      const customer = await json('POST', '/admin/customers', admin, { name: `bench ${c}`, plan: 'pro' });
      const phoneNumberId = `benchreceipts${c}`;
      await json('POST', `/admin/customers/${customer.id}/chat-accounts`, admin, {
        type: 'OFFICIAL',
        phoneNumber: '+15550100200',
        displayName: 'b',
        official: { phoneNumberId, wabaId: 'w', accessToken: 't' },
      });
      const { key } = await json('POST', `/admin/customers/${customer.id}/api-keys`, admin, {});
      const apiHeaders = { 'x-api-key': key, 'content-type': 'application/json' };
      await json('POST', '/webhook-endpoints', apiHeaders, {
        url: `http://127.0.0.1:9/hook${c}`,
        events: ['message.status'],
      });
      tenants.push({ key, phoneNumberId });
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < messages) {
          const i = next++;
          const t = tenants[i % CUSTOMERS]!;
          await json(
            'POST',
            '/messages',
            { 'x-api-key': t.key, 'content-type': 'application/json' },
            {
              externalId: `bench-${i}`,
              to: { type: 'phone', phoneE164: '+15551230000' },
              content: { type: 'text', text: 'hello' },
            },
          );
        }
      }),
    );
    await stop(api);

    // 2. As if the dispatcher had sent them all.
    const targets = await withSql(env, async (q) => {
      await q(`UPDATE messages SET status = 'sent', sent_at = now(), provider_message_id = 'wamid.bench.' || id,
                      attempt_count = 1, last_attempt_at = now(), due_at = NULL`);
      return (await q(
        `SELECT a.phone_number_id AS "phoneNumberId", m.provider_message_id AS wamid
           FROM messages m JOIN chat_accounts a ON a.id = m.chat_account_id ORDER BY m.created_at, m.id`,
      )) as Target[];
    });
    const file = path.join(os.tmpdir(), `receipts-bench-${crypto.randomBytes(4).toString('hex')}.json`);
    fs.writeFileSync(file, JSON.stringify(targets));

    // 3. The receipts.
    api = serve(true);
    await waitHealthy(api, url);
    const loadavg = os.loadavg().map((l) => Math.round(l * 100) / 100);
    const gen = startTs('load', fileURLToPath(import.meta.url), {
      RECEIPTS_LOAD: '1',
      TARGETS_FILE: file,
      TARGET: `${url}/provider/webhooks/app`,
    });
    await gen.exited;
    const line = gen.stdout.join('').trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`load generator: ${gen.output.join('')}`);
    const result = JSON.parse(line);
    await stop(api);
    if (process.env.BENCH_SERVER_LOG) fs.writeFileSync(process.env.BENCH_SERVER_LOG, api.output.join(''));
    fs.rmSync(file, { force: true });

    // 4. Everything applied, once.
    const check = await withSql(env, async (q) => {
      const [row] = await q(
        `SELECT (SELECT count(*)::int FROM messages WHERE status = 'read') AS read,
                (SELECT count(*)::int FROM events WHERE type = 'message.status') AS events,
                (SELECT count(*)::int FROM webhook_deliveries) AS deliveries,
                (SELECT count(*)::int FROM pending_receipts) AS parked`,
      );
      return row as { read: number; events: number; deliveries: number; parked: number };
    });
    const ok =
      check.read === messages && check.events === 2 * messages && check.deliveries === 2 * messages && !check.parked;
    return { tree, backend, messages, ...result, loadavgAtStart: loadavg, check, ok };
  } finally {
    await stopAll();
    await db.drop();
  }
}

async function main() {
  const messages = Number(arg('messages', '2000'));
  const backends = arg('backends', 'postgres,pglite').split(',') as Backend[];
  const trees = arg('trees', path.join(here, '..'))
    .split(',')
    .map((t) => path.resolve(t));
  const results = [];
  for (const backend of backends)
    for (const tree of trees) {
      const r = await scenario(tree, backend, messages);
      console.log(JSON.stringify(r));
      results.push(r);
    }
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

if (process.env.RECEIPTS_LOAD === '1') await load();
else await main();
