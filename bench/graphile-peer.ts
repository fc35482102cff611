// The peer for the dispatch figure: graphile-worker (the npm package, a dev dependency of the bench
// only) sending the same messages through the same emulator, with ChatGate's own provider client
// (same HTTP client and connection pool). One process, like `npm start`: it enqueues the jobs in
// batches (addJobs) while its runner works them, batched (local queue, batched completion) with
// 1,000 jobs at a time. Output: one JSON line on stdout once every job has sent.
//   DATABASE_URL (a fresh database), EMU_URL, PHONE_IDS (comma list), JOBS, BATCH (500),
//   CONCURRENCY (1000), POOL (20: ChatGate's DB_POOL_SIZE default)
import { Logger, makeWorkerUtils, run, type Task } from 'graphile-worker';

import { createProviderClient } from '../src/provider/cloud-api.js';

const env = (name: string, def?: string) => {
  const v = process.env[name] ?? def;
  if (v === undefined) throw new Error(`${name} is required`);
  return v;
};
const connectionString = env('DATABASE_URL');
const phoneIds = env('PHONE_IDS').split(',');
const JOBS = Number(env('JOBS'));
const BATCH = Number(env('BATCH', '500'));
const CONCURRENCY = Number(env('CONCURRENCY', '1000'));
const POOL = Number(env('POOL', '20'));

// Errors only (graphile-worker logs every job at info otherwise).
const logger = new Logger(() => (level, message) => {
  if (level === 'error') console.error(message);
});
const provider = createProviderClient({ baseUrl: env('EMU_URL'), apiVersion: 'v23.0' });

type Payload = { phoneNumberId: string; to: string; text: string; messageId: string };
let done = 0;
let failedAttempts = 0;
let allDone: () => void;
const finished = new Promise<void>((r) => (allDone = r));

const send: Task = async (payload) => {
  const p = payload as Payload;
  const res = await provider.send(
    { phoneNumberId: p.phoneNumberId, accessToken: 't' },
    p.to,
    { type: 'text', text: p.text },
    p.messageId,
  );
  if (!res.ok) {
    failedAttempts++;
    throw new Error(`send failed: ${res.summary}`);
  }
  if (++done === JOBS) allDone();
};

const preset = {
  worker: {
    connectionString,
    concurrentJobs: CONCURRENCY,
    maxPoolSize: POOL,
    pollInterval: 1000,
    localQueue: { size: CONCURRENCY },
    completeJobBatchDelay: 0,
    failJobBatchDelay: 0,
  },
};
const utils = await makeWorkerUtils({ connectionString, logger });
await utils.migrate();
const runner = await run({ preset, logger, taskList: { send }, noHandleSignals: true });

const enqueueStartedAt = Date.now();
const batches: Payload[][] = [];
for (let i = 0; i < JOBS; i += BATCH)
  batches.push(
    Array.from({ length: Math.min(BATCH, JOBS - i) }, (_, j) => ({
      phoneNumberId: phoneIds[(i + j) % phoneIds.length]!,
      to: '15551234567',
      text: 'hello from the benchmark',
      messageId: `g-${i + j}`,
    })),
  );
// Up to four batches in flight at once, as several API requests would be.
let next = 0;
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      await utils.addJobs(batch.map((payload) => ({ identifier: 'send', payload, maxAttempts: 5 })));
    }
  }),
);
const enqueueEndedAt = Date.now();
await finished;
const doneAt = Date.now();
await runner.stop();
await utils.release();
console.log(JSON.stringify({ jobs: JOBS, enqueueStartedAt, enqueueEndedAt, doneAt, failedAttempts }));
process.exit(0);
