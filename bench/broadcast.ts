// npm run bench, part 5: a 5,000-recipient broadcast.
//   1. PostgreSQL, API and worker in their own processes, the emulator (100 ms latency) in its own:
//      an account paced at 80 messages/s (the emulator's limit for the number is 80 too). Targets:
//      accepting the request < 1 s; every message sent within 1.05 × 62.5 s (5,000 / 80) of it.
//   2. PGlite (on disk, API role only): the time to accept the same request.
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Backend, createDatabase } from './databases.js';
import { ADMIN_TOKEN, benchAccount, ENCRYPTION_KEY, json, startLiveStack } from './live-stack.js';
import { freePort, startTs, stop, stopAll, waitHealthy } from './processes.js';
import { maxPerSecond } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RECIPIENTS = 5000;
const MPS = 80;
const BOUND_S = RECIPIENTS / MPS; // 62.5

const body = (externalId: string, n: number) =>
  JSON.stringify({
    externalId,
    content: { type: 'text', text: 'Our spring sale starts today' },
    recipients: Array.from({ length: n }, (_, i) => ({ phoneE164: `+1555${String(1_000_000 + i).padStart(7, '0')}` })),
    metadata: { campaign: 'spring' },
  });

/** Milliseconds to accept a broadcast of `n` recipients (after one small warm-up broadcast). */
async function timeAccept(
  apiUrl: string,
  key: string,
  n: number,
): Promise<{ ms: number; broadcastId: string; startedAt: number }> {
  await json(`${apiUrl}/messages/broadcast`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: body(`warm-${crypto.randomUUID()}`, 20),
  });
  const payload = body(`bench-${crypto.randomUUID()}`, n);
  const startedAt = Date.now();
  const t0 = performance.now();
  const ack = await json(`${apiUrl}/messages/broadcast`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: payload,
  });
  return { ms: Math.round(performance.now() - t0), broadcastId: ack.broadcastId as string, startedAt };
}

async function postgresRun() {
  const stack = await startLiveStack({ adminUrl });
  const { sql, emuUrl, apiUrl } = stack;
  try {
    stack.startWorker();
    await new Promise((r) => setTimeout(r, 3000)); // started and listening
    const t = await benchAccount(apiUrl, emuUrl, MPS);
    const accept = await timeAccept(apiUrl, t.key, RECIPIENTS);
    const open = async () =>
      Number(
        (
          await sql`SELECT count(*)::int AS n FROM messages WHERE broadcast_id = ${accept.broadcastId} AND status IN ('pending', 'queued')`
        )[0]!.n,
      );
    const deadline = Date.now() + 3 * BOUND_S * 1000;
    while ((await open()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const [row] =
      await sql`SELECT count(*) FILTER (WHERE status = 'sent')::int AS sent, count(*) FILTER (WHERE status = 'failed')::int AS failed,
                                   count(*) FILTER (WHERE attempt_count > 1)::int AS retried, max(sent_at) AS last,
                                   max(sent_at) FILTER (WHERE attempt_count = 1) AS last_first_try, min(sent_at) AS first FROM messages WHERE broadcast_id = ${accept.broadcastId}`;
    const sent = ((await json(`${emuUrl}/__emulator/sent`)).sent as { phoneNumberId: string; at: number }[]).filter(
      (s) => s.phoneNumberId === t.phoneNumberId,
    );
    const finishS = ((row!.last as Date).getTime() - accept.startedAt) / 1000;
    return {
      acceptMs: accept.ms,
      finishS: Math.round(finishS * 10) / 10,
      firstSentS: Math.round(((row!.first as Date).getTime() - accept.startedAt) / 100) / 10,
      /** When the last message sent at its first attempt left: the finish without rate-limit retries. */
      lastFirstAttemptS: Math.round(((row!.last_first_try as Date).getTime() - accept.startedAt) / 100) / 10,
      ratioToBound: Math.round((finishS / BOUND_S) * 1000) / 1000,
      sent: Number(row!.sent),
      failed: Number(row!.failed),
      retried: Number(row!.retried),
      emulatorReceived: sent.length,
      maxInAnySecond: maxPerSecond(sent.map((s) => s.at)),
    };
  } finally {
    await stack.close();
  }
}

async function acceptOnly(backend: Backend) {
  const db = await createDatabase(backend, adminUrl);
  const apiPort = await freePort();
  const api = startTs(`chatgate-api-${backend}`, path.join(here, 'serve-chatgate.ts'), {
    ...db.env,
    ADMIN_TOKEN,
    ENCRYPTION_KEY,
    PORT: String(apiPort),
    LOG_LEVEL: 'warn',
  });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  try {
    await waitHealthy(api, apiUrl);
    const t = await benchAccount(apiUrl, null, MPS);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push((await timeAccept(apiUrl, t.key, RECIPIENTS)).ms);
    return { acceptMs: runs };
  } finally {
    await stop(api);
    await db.drop();
  }
}

async function main() {
  const results: Record<string, unknown> = {};
  try {
    results.postgres = await postgresRun();
    results.pgliteAccept = await acceptOnly('pglite');
  } finally {
    await stopAll();
  }
  console.log(
    `\nBroadcast of ${RECIPIENTS} recipients, account paced at ${MPS}/s (emulator limit ${MPS}/s, latency 100 ms):`,
  );
  console.log(JSON.stringify(results, null, 2));
  const pg = results.postgres as { acceptMs: number; finishS: number; ratioToBound: number; sent: number };
  const lite = results.pgliteAccept as { acceptMs: number[] };
  console.log(`accept (PostgreSQL): ${pg.acceptMs} ms (target < 1000): ${pg.acceptMs < 1000 ? 'PASS' : 'FAIL'}`);
  console.log(
    `accept (PGlite):     ${lite.acceptMs.join(', ')} ms (target < 1000): ${Math.max(...lite.acceptMs) < 1000 ? 'PASS' : 'FAIL'}`,
  );
  console.log(
    `finish:              ${pg.finishS} s = ${pg.ratioToBound} × ${BOUND_S} s, ${pg.sent} sent (target ≤ 1.05 ×, all sent): ${pg.ratioToBound <= 1.05 && pg.sent === RECIPIENTS ? 'PASS' : 'FAIL'}`,
  );
}

await main();
