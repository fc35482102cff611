// The usage rollup's loop (decision 0078): every USAGE_ROLLUP_MS, the usage steps of the
// transactions that have ended are added to usage_daily (lifecycle/usage-rollup.ts). GET /usage
// reads the same counts whether a step is rolled up yet or not, so the interval only bounds how
// many events a read adds up; it runs on the worker-loop skeleton, beside the dispatcher.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { rollUpUsage } from '../lifecycle/usage-rollup.js';
import { createWorkerLoop, type WorkerLoop } from '../shared/worker-loop.js';

/** How often the steps are rolled up: a read adds up at most about this long's events. */
export const USAGE_ROLLUP_MS = 2_000;

export function createUsageRollup(deps: { db: Db; log: Logger; intervalMs?: number }): WorkerLoop {
  const { db, log } = deps;
  return createWorkerLoop({
    name: 'usage-rollup',
    pollMs: deps.intervalMs ?? USAGE_ROLLUP_MS,
    log,
    async pass() {
      await retryTransient(() => rollUpUsage(db));
      // Never "did work": the loop sleeps a whole interval between rollups.
      return { didWork: false };
    },
  });
}
