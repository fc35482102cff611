// npm run bench, part 6: scheduled sends (issue #15): how late 1,000 messages due in the same
// second leave. PostgreSQL, API and worker in their own processes, the emulator in its own
// (answering at once, receipts off). 50 Pro accounts paced at 80/s, 20 messages each, all with
// the same `sendAt` (the next whole second at least 65 s ahead: the API refuses less than 60 s).
// Lateness = the emulator's receive time − sendAt. Targets: none early; p99 ≤ 1,000 ms ("sent
// within one second of it"). At 80/s an account's 20 messages need 0.24 s of slots by themselves.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { benchAccount, json, startLiveStack } from './live-stack.js';
import { stopAll } from './processes.js';
import { writeJson } from './report.js';

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ACCOUNTS = Number(process.env.BENCH_SCHEDULED_ACCOUNTS ?? 50);
const PER_ACCOUNT = Number(process.env.BENCH_SCHEDULED_PER_ACCOUNT ?? 20);
const MPS = 80;
const LEAD_MS = 65_000;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function run() {
  // BENCH_SCHEDULED_ENV: settings for the service's processes as JSON (e.g. {"WORKER_BATCH_SIZE":"500"}).
  const stack = await startLiveStack({ adminUrl, env: JSON.parse(process.env.BENCH_SCHEDULED_ENV ?? '{}') });
  const { emuUrl, apiUrl } = stack;
  try {
    await json(`${emuUrl}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ latencyMs: 0 }) });
    stack.startWorker();
    const accounts = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await benchAccount(apiUrl, emuUrl, MPS));
    const dueMs = Math.ceil((Date.now() + LEAD_MS) / 1000) * 1000;
    const sendAt = new Date(dueMs).toISOString();
    const acceptStarted = Date.now();
    // 50 requests at a time, one per account.
    for (let m = 0; m < PER_ACCOUNT; m++)
      await Promise.all(
        accounts.map((a, i) =>
          json(`${apiUrl}/messages`, {
            method: 'POST',
            headers: { 'x-api-key': a.key },
            body: JSON.stringify({
              externalId: `sched-${i}-${m}`,
              to: { type: 'phone', phoneE164: `+1555${String(2_000_000 + i * 1000 + m).padStart(7, '0')}` },
              content: { type: 'text', text: 'See you at nine' },
              sendAt,
            }),
          }),
        ),
      );
    const acceptSeconds = (Date.now() - acceptStarted) / 1000;
    const total = ACCOUNTS * PER_ACCOUNT;
    const ours = new Set(accounts.map((a) => a.phoneNumberId));
    const sentList = async () =>
      ((await json(`${emuUrl}/__emulator/sent`)).sent as { phoneNumberId: string; at: number }[]).filter((s) =>
        ours.has(s.phoneNumberId),
      );
    const early = (await sentList()).length; // anything before the due time is too early
    const deadline = dueMs + 60_000;
    let sent = await sentList();
    while (sent.length < total && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      sent = await sentList();
    }
    const lateness = sent.map((s) => s.at - dueMs).sort((a, b) => a - b);
    return {
      messages: total,
      accounts: ACCOUNTS,
      acceptSeconds: Math.round(acceptSeconds * 10) / 10,
      sent: sent.length,
      sentBeforeDue: early + lateness.filter((l) => l < 0).length,
      latenessMs:
        lateness.length > 0
          ? {
              min: lateness[0]!,
              p50: percentile(lateness, 50),
              p99: percentile(lateness, 99),
              max: lateness[lateness.length - 1]!,
            }
          : null,
    };
  } finally {
    await stack.close();
  }
}

try {
  const result = await run();
  console.log(
    `\nScheduled sends: ${result.messages} messages due in the same second over ${result.accounts} accounts paced at ${MPS}/s (accepted in ${result.acceptSeconds} s, ${LEAD_MS / 1000} s ahead):`,
  );
  const l = result.latenessMs;
  console.log(
    `  sent ${result.sent} of ${result.messages}; before the due time: ${result.sentBeforeDue} [target 0: ${result.sentBeforeDue === 0 ? 'met' : 'MISSED'}]`,
  );
  console.log(
    l
      ? `  lateness after sendAt: min ${l.min} ms, p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms [target p99 ≤ 1,000 ms: ${l.p99 <= 1000 && result.sent === result.messages ? 'met' : 'MISSED'}]`
      : '  nothing was sent',
  );
  console.log(
    `Results: ${writeJson(resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-scheduled`, result)}`,
  );
} finally {
  await stopAll();
}
