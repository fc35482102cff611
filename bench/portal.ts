// Portal page times with 10,000 messages in the account (issue #12: every page under 100 ms).
// In-process server on the embedded database (or BENCH_PG_URL's server with --pg), one customer
// with 10,000 messages written by SQL, 30 timed requests per page after 5 warm-ups; prints p50/p95.

import { call, createTenant, startService } from '../test/support/harness.js';
import { createPortalUser, PortalClient } from '../test/support/portal.js';

const MESSAGES = 10_000;
const RUNS = 30;

async function main() {
  const svc = await startService({ role: 'api' });
  try {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const statuses = ['pending', 'queued', 'sent', 'delivered', 'read', 'failed'];
    const now = Date.now();
    for (let i = 0; i < MESSAGES; i += 1000) {
      const n = Math.min(1000, MESSAGES - i);
      await svc.db.query(
        `INSERT INTO messages (id, customer_id, chat_account_id, external_id, payload_hash, recipient, channel, content,
                               metadata, sandbox, status, max_attempts, created_at, expires_at)
         SELECT gen_random_uuid(), $1, $2, 'bench-' || ($3 + g), 'h', '+1555000' || lpad(g::text, 4, '0'), 'chat_official',
                '{"type":"text","text":"hi"}', '{"order":"x"}', false, ($4::text[])[1 + g % 6], 5,
                to_timestamp($5 / 1000.0) - (g || ' minutes')::interval, now() + interval '7 days'
           FROM generate_series(0, $6 - 1) g`,
        [t.customerId, t.accountId, i, statuses, now - i * 60_000, n],
      );
    }
    await createPortalUser(svc.url, t.customerId, 'bench@example.com');
    const c = new PortalClient(svc.url);
    await c.login('bench@example.com');
    const one = (await call(svc.url, 'GET', '/messages?limit=1', { key: t.key })).body.messages[0].messageId;
    const pages = [
      '/portal',
      '/portal/messages',
      '/portal/messages?status=failed',
      `/portal/messages/${one}`,
      '/portal/keys',
      '/portal/accounts',
      '/portal/webhooks',
      '/portal/inbox',
      '/portal/broadcasts',
      '/portal/templates',
    ];
    console.log(`portal pages, ${MESSAGES} messages, ${svc.db.kind}, ${RUNS} runs each (ms)`);
    for (const p of pages) {
      for (let i = 0; i < 5; i++) await c.get(p);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const start = performance.now();
        const res = await c.get(p);
        times.push(performance.now() - start);
        if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
      }
      times.sort((a, b) => a - b);
      const q = (f: number) => times[Math.min(times.length - 1, Math.floor(f * times.length))]!.toFixed(1);
      console.log(`${p.padEnd(60)} p50 ${q(0.5).padStart(6)}  p95 ${q(0.95).padStart(6)}  max ${q(1).padStart(6)}`);
    }
  } finally {
    await svc.stop();
  }
}

await main();
