// The dispatcher worker: claims due messages in batches and moves each one step forward.
import os from 'node:os';
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { MESSAGES_READY } from '../messages/insert-batch.js';
import { createWorkerLoop } from '../shared/worker-loop.js';
import { claimDue, releaseLeases } from './claim.js';
import { simulateSandboxStep } from './sandbox-simulator.js';
import { applyTransitions, type Transition } from './transitions.js';

export type DispatcherOptions = {
  batchSize: number;
  leaseSeconds: number;
  pollMs: number;
  sandboxStepMs: number;
};

export function createDispatcher(deps: { db: Db; log: Logger; options: DispatcherOptions }) {
  const { db, log, options } = deps;
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  let unlisten: (() => Promise<void>) | null = null;

  async function pass() {
    const claimed = await claimDue(db, workerId, options.batchSize, options.leaseSeconds);
    if (claimed.length === 0) return { didWork: false };
    const now = new Date();
    const transitions = claimed
      .map((m) => simulateSandboxStep(m, now, options.sandboxStepMs))
      .filter((t): t is Transition => t !== null);
    await db.transaction((tx) => applyTransitions(tx, workerId, transitions));
    const nextDueAt = transitions.reduce<Date | null>((min, t) => (t.nextDueAt && (!min || t.nextDueAt < min) ? t.nextDueAt : min), null);
    log.debug({ worker: workerId, claimed: claimed.length }, 'dispatched batch');
    return { didWork: true, nextDueAt };
  }

  const loop = createWorkerLoop({ name: 'dispatcher', pollMs: options.pollMs, log, pass });

  return {
    workerId,
    async start() {
      unlisten = await db.listen(MESSAGES_READY, () => loop.wake());
      loop.start();
    },
    async stop() {
      await loop.stop();
      await unlisten?.();
      await releaseLeases(db, workerId);
    },
  };
}
