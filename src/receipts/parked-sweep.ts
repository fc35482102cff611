// The parked-receipt sweep: a safety net beside the dispatcher (decisions 0004, 0011). A receipt
// that arrives before its send's commit is parked; the send's own commit applies it (outcomes.ts),
// and this small loop applies, every PARKED_SWEEP_MS, any parked receipt whose message is known
// by now. It runs on the worker-loop skeleton, apart from the dispatcher's pass (the hot path).
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyParkedReceipts } from '../lifecycle/apply-receipt.js';
import { createWorkerLoop, type WorkerLoop } from '../shared/worker-loop.js';

export function createParkedReceiptSweep(deps: { db: Db; log: Logger; intervalMs: number }): WorkerLoop {
  const { db, log, intervalMs } = deps;
  return createWorkerLoop({
    name: 'parked-receipt-sweep',
    pollMs: intervalMs,
    log,
    async pass() {
      await retryTransient(() => db.transaction((tx) => applyParkedReceipts(tx, null)));
      // Never "did work": the loop sleeps a whole interval between sweeps.
      return { didWork: false };
    },
  });
}
