// npm run bench, part 2: the dispatcher sending live messages through the provider emulator
// (100 ms latency) on PostgreSQL. Messages are queued with the worker stopped, then one worker
// process sends them; rates are read from the emulator's own receive times.
//   1. one account capped at 80/s and one at 1,000/s: sends/s (target ≥ 0.95 × cap, never above)
//   2. many accounts at once: aggregate sends/s, each recording `sent` and its event (target ≥ 5,000/s)
//   3. accept → sent latency when lightly loaded (p50, target ≤ 50 ms), with 0 and 100 ms provider latency
//   BENCH_DISPATCH_ACCOUNTS (40), BENCH_DISPATCH_PER_ACCOUNT (500), BENCH_CPU_PROF=1 (worker profiles)
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { benchAccount, json, startLiveStack } from './live-stack.js';
import { type Child, memoryMb, stop, stopAll } from './processes.js';
import { maxPerSecond } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AGG_ACCOUNTS = Number(process.env.BENCH_DISPATCH_ACCOUNTS ?? 40);
const AGG_PER_ACCOUNT = Number(process.env.BENCH_DISPATCH_PER_ACCOUNT ?? 500);

type Sent = { phoneNumberId: string; at: number; messageId: string | null };

/** Concurrency-limited map. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function main() {
  const stack = await startLiveStack({ adminUrl, env: { WORKER_BATCH_SIZE: '500', WORKER_MAX_IN_FLIGHT: '2000' } });
  const { sql, emuUrl, apiUrl } = stack;
  let worker: Child | null = null;
  const results: Record<string, unknown> = {};
  try {
    const account = (mps: number) => benchAccount(apiUrl, emuUrl, mps);

    const queue = async (accounts: { key: string }[], perAccount: number) => {
      const jobs = accounts.flatMap((a) => Array.from({ length: perAccount }, (_, i) => ({ key: a.key, i })));
      await pool(jobs, 64, async ({ key }) => {
        await json(`${apiUrl}/messages`, {
          method: 'POST',
          headers: { 'x-api-key': key },
          body: JSON.stringify({
            externalId: crypto.randomUUID(),
            to: { type: 'phone', phoneE164: '+15551234567' },
            content: { type: 'text', text: 'bench' },
          }),
        });
      });
    };
    const sentCount = async () =>
      Number((await sql`SELECT count(*)::int AS n FROM messages WHERE status = 'sent'`)[0]!.n);
    const runWorker = async (expected: number) => {
      await json(`${emuUrl}/__emulator/sent`, { method: 'DELETE' });
      const prof =
        process.env.BENCH_CPU_PROF === '1'
          ? ['--cpu-prof', `--cpu-prof-dir=${path.join(here, 'results', 'dispatch-prof')}`]
          : [];
      worker = stack.startWorker(prof);
      const deadline = Date.now() + 300_000;
      while ((await sentCount()) < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const rss = memoryMb(worker.pid);
      await stop(worker);
      worker = null;
      return { sent: (await json(`${emuUrl}/__emulator/sent`)).sent as Sent[], rss };
    };

    // 1. the cap binds
    for (const [mps, count] of [
      [80, 480],
      [1000, 5000],
    ] as const) {
      await sql`DELETE FROM messages`;
      const a = await account(mps);
      await queue([a], count);
      const { sent, rss } = await runWorker(count);
      const times = sent.filter((s) => s.phoneNumberId === a.phoneNumberId).map((s) => s.at);
      const rate = ((times.length - 1) * 1000) / (Math.max(...times) - Math.min(...times));
      const retried = Number((await sql`SELECT count(*)::int AS n FROM messages WHERE attempt_count > 1`)[0]!.n);
      results[`cap${mps}`] = {
        cap: mps,
        messages: times.length,
        sendsPerSec: Math.round(rate * 10) / 10,
        ratioToCap: Math.round((rate / mps) * 1000) / 1000,
        maxInAnySecond: maxPerSecond(times),
        retriedAfterRateLimit: retried,
        workerRssMb: rss.rssMb,
      };
    }

    // 2. many accounts at once
    await sql`DELETE FROM messages`;
    await sql`DELETE FROM events`;
    const many = await Promise.all(Array.from({ length: AGG_ACCOUNTS }, () => account(1000)));
    await queue(many, AGG_PER_ACCOUNT);
    const total = AGG_ACCOUNTS * AGG_PER_ACCOUNT;
    const { sent, rss } = await runWorker(total);
    const times = sent.map((s) => s.at);
    const events = Number((await sql`SELECT count(*)::int AS n FROM events WHERE data->>'status' = 'sent'`)[0]!.n);
    const span = Math.max(...times) - Math.min(...times);
    results.aggregate = {
      accounts: AGG_ACCOUNTS,
      messages: total,
      sendsPerSec: Math.round((total * 1000) / span),
      sentEvents: events,
      emulatorReceived: sent.length,
      workerRssMb: rss.rssMb,
      workerPeakRssMb: rss.peakRssMb,
    };

    // 3. accept → sent when lightly loaded
    for (const latency of [0, 100]) {
      await sql`DELETE FROM messages`;
      await json(`${emuUrl}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ latencyMs: latency }) });
      const a = await account(80);
      worker = stack.startWorker();
      await new Promise((r) => setTimeout(r, 3000)); // started and listening
      for (let i = 0; i < 40; i++) {
        await queue([a], 1);
        await new Promise((r) => setTimeout(r, 100));
      }
      while ((await sentCount()) < 40) await new Promise((r) => setTimeout(r, 100));
      await stop(worker);
      worker = null;
      const rows = await sql`SELECT extract(epoch FROM sent_at - created_at) * 1000 AS ms FROM messages ORDER BY 1`;
      const ms = rows.map((r) => Number(r.ms));
      results[`latency${latency}ms`] = {
        providerLatencyMs: latency,
        p50Ms: Math.round(ms[Math.floor(ms.length / 2)]!),
        p99Ms: Math.round(ms[ms.length - 1]!),
      };
    }
  } finally {
    await stack.close();
    await stopAll();
  }
  console.log('\nDispatch through the emulator (PostgreSQL, one worker process, provider latency 100 ms unless said):');
  console.log(JSON.stringify(results, null, 2));
  const c80 = results.cap80 as { ratioToCap: number; maxInAnySecond: number };
  const c1k = results.cap1000 as { ratioToCap: number; maxInAnySecond: number };
  const agg = results.aggregate as { sendsPerSec: number };
  const lat = results.latency0ms as { p50Ms: number };
  console.log(
    `cap 80/s:    ${c80.ratioToCap} × cap, max ${c80.maxInAnySecond} in any second: ${c80.ratioToCap >= 0.95 && c80.maxInAnySecond <= 80 ? 'PASS' : 'FAIL'}`,
  );
  console.log(
    `cap 1000/s:  ${c1k.ratioToCap} × cap, max ${c1k.maxInAnySecond} in any second: ${c1k.ratioToCap >= 0.95 && c1k.maxInAnySecond <= 1000 ? 'PASS' : 'FAIL'}`,
  );
  console.log(`aggregate:   ${agg.sendsPerSec} sends/s (target ≥ 5000): ${agg.sendsPerSec >= 5000 ? 'PASS' : 'FAIL'}`);
  console.log(
    `accept→sent: p50 ${lat.p50Ms} ms with a 0 ms provider (target ≤ 50 ms): ${lat.p50Ms <= 50 ? 'PASS' : 'FAIL'}`,
  );
}

await main();
