// A worker is a plain loop over the database: do a pass; if it found work, go again at once;
// else sleep until woken (NOTIFY), until the next known due time, or until the poll interval.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';

export type PassResult = { didWork: boolean; nextDueAt?: Date | null };

export type WorkerLoop = { start(): Promise<void>; wake(at?: Date): void; stop(): Promise<void> };

export function createWorkerLoop(opts: {
  name: string;
  pollMs: number;
  log: Logger;
  pass: () => Promise<PassResult>;
  /** A NOTIFY channel that wakes the loop (new work was committed). */
  wakeOn?: { db: Pick<Db, 'listen'>; channel: string };
}): WorkerLoop {
  let running = false;
  let done: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  let wakeUp: (() => void) | null = null;
  let earliest: number | null = null;
  let woken = false;
  let unlisten: (() => Promise<void>) | null = null;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (woken) {
        woken = false;
        resolve();
        return;
      }
      wakeUp = () => {
        if (timer) clearTimeout(timer);
        timer = null;
        wakeUp = null;
        woken = false;
        resolve();
      };
      timer = setTimeout(() => wakeUp?.(), Math.max(0, ms));
    });
  }

  async function run() {
    let failures = 0;
    while (running) {
      let result: PassResult = { didWork: false };
      try {
        result = await opts.pass();
        failures = 0;
      } catch (err) {
        failures++;
        opts.log.error({ err, worker: opts.name }, 'worker pass failed');
        await sleep(Math.min(30_000, 250 * 2 ** Math.min(failures, 7)));
        continue;
      }
      if (result.nextDueAt) earliest = Math.min(earliest ?? Infinity, result.nextDueAt.getTime());
      if (result.didWork || !running) continue;
      const now = Date.now();
      if (earliest !== null && earliest <= now) earliest = null;
      const until = earliest !== null ? Math.min(opts.pollMs, earliest - now) : opts.pollMs;
      await sleep(until);
      if (earliest !== null && earliest <= Date.now()) earliest = null;
    }
  }

  const loop: WorkerLoop = {
    async start() {
      if (running) return;
      if (opts.wakeOn) unlisten = await opts.wakeOn.db.listen(opts.wakeOn.channel, () => loop.wake());
      running = true;
      done = run();
    },
    wake(at?: Date) {
      if (at && at.getTime() > Date.now()) {
        earliest = Math.min(earliest ?? Infinity, at.getTime());
        return;
      }
      if (wakeUp) wakeUp();
      else woken = true;
    },
    async stop() {
      running = false;
      if (wakeUp) wakeUp();
      await done;
      await unlisten?.();
    },
  };
  return loop;
}
