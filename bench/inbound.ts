// npm run bench, part 4: inbound ingestion through the provider webhook (each POST signed and
// verified, one message each, updating the sender aggregate and writing its events), on
// PostgreSQL, with autocannon in its own process; then 200-number lookups (p99).
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import postgres from 'postgres';

import { createDatabase } from './databases.js';
import { freePort, memoryMb, startTs, stop, stopAll, waitHealthy } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const APP_SECRET = crypto.randomBytes(16).toString('hex');
const ADMIN_TOKEN = crypto.randomBytes(24).toString('hex');

async function main() {
  const db = await createDatabase('postgres', adminUrl);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = startTs('chatgate', path.join(here, 'serve-chatgate.ts'), {
    ...db.env,
    PORT: String(port),
    ADMIN_TOKEN,
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'),
    PROVIDER_APP_SECRET: APP_SECRET,
    LOG_LEVEL: 'warn',
  });
  const sql = postgres(db.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
  try {
    await waitHealthy(api, url);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const customer = await (
      await fetch(`${url}/admin/customers`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'bench', plan: 'pro' }),
      })
    ).json();
    const phoneNumberId = 'benchinbound1';
    await fetch(`${url}/admin/customers/${customer.id}/chat-accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        type: 'OFFICIAL',
        phoneNumber: '+15550100200',
        displayName: 'b',
        official: { phoneNumberId, wabaId: 'w', accessToken: 't' },
      }),
    });
    const key = (
      await (
        await fetch(`${url}/admin/customers/${customer.id}/api-keys`, { method: 'POST', headers: admin, body: '{}' })
      ).json()
    ).key as string;

    const load = startTs('load', path.join(here, 'inbound-load.ts'), {
      TARGET: `${url}/provider/webhooks/app`,
      APP_SECRET,
      PHONE_NUMBER_ID: phoneNumberId,
      DURATION: String(DURATION),
      CONNECTIONS: '50',
    });
    await load.exited;
    const result = JSON.parse(load.stdout.join('').trim().split('\n').pop()!);
    const rss = memoryMb(api.pid);
    const [counts] =
      await sql`SELECT (SELECT count(*)::int FROM inbound_receptions) AS receptions, (SELECT count(*)::int FROM events WHERE type = 'message.inbound') AS events, (SELECT count(*)::int FROM senders) AS senders`;

    // 200-number lookups, one at a time, against the senders just written.
    const phones = Array.from({ length: 200 }, (_, i) => `+1650${String(5550000 + i * 37).padStart(7, '0')}`);
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const started = performance.now();
      const res = await fetch(`${url}/inbound-senders/lookup`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ phones }),
      });
      await res.text();
      if (i >= 20) times.push(performance.now() - started); // after warm-up
    }
    times.sort((a, b) => a - b);
    const p = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
    const out = {
      ingestion: {
        requestsPerSec: result.rps,
        p50Ms: result.p50,
        p99Ms: result.p99,
        non2xx: result.non2xx,
        ...counts,
        serverRssMb: rss.rssMb,
      },
      lookup200: { p50Ms: p(0.5), p99Ms: p(0.99) },
    };
    console.log('\nInbound (PostgreSQL, one process, one message per signed webhook, 50 connections):');
    console.log(JSON.stringify(out, null, 2));
    console.log(`ingestion:  ${result.rps} inbound/s (target ≥ 3000): ${result.rps >= 3000 ? 'PASS' : 'FAIL'}`);
    console.log(
      `lookup 200: p99 ${out.lookup200.p99Ms} ms (target ≤ 20 ms): ${out.lookup200.p99Ms <= 20 ? 'PASS' : 'FAIL'}`,
    );
  } finally {
    await stop(api);
    await stopAll();
    await sql.end({ timeout: 1 });
    await db.drop();
  }
}

await main();
