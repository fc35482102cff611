// A worker is a plain loop over the database: do a pass; if it found work, go again at once;
// else sleep until woken (NOTIFY), until the next known due time, or until the poll interval.
// A failed pass (the database gone, a connection reset) is tried again after a short backoff that
// never grows past PASS_RETRY_CAP_MS, for as long as it takes: a loop is never given up, and it is
// back within seconds of the database. createLeasedWorker is the shape of a worker over leased
// rows (messages, webhook deliveries): claim due rows under a lease, act on them, record the
// outcomes in group-committed batches.
import crypto from 'node:crypto';
import os from 'node:os';

import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { databaseFault } from '../db/db-errors.js';
import { backoffDelayMs, doublingScheduleMs } from './backoff.js';
import { createGroupCommit } from './group-commit.js';

export type PassResult = { didWork: boolean; nextDueAt?: Date | null };

export type WorkerLoop = {
  start(): Promise<void>;
  wake(at?: Date): void;
  stop(): Promise<void>;
  /**
   * How long the loop has wanted a pass to complete and none has (ms; 0 while it sleeps after a
   * completed pass): a pass that hangs, or passes failing one after another, show here.
   */
  stalledMs(): number;
};

/**
 * The wait before a failed pass is tried again: 200 ms doubling to at most 5 s (±20 %). Short, so a
 * loop is back within seconds of the database; bounded, so a long outage costs a try per loop
 * every few seconds, not a storm.
 */
export const PASS_RETRY_SCHEDULE_MS = doublingScheduleMs(200, 5_000);

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
  let earliest: number | null = null;
  let unlisten: (() => Promise<void>) | null = null;
  const sleeper = createSleeper();
  /** When the loop began wanting a pass that has not completed yet (null: the last one completed). */
  let wantedSince: number | null = null;

  async function run() {
    let failures = 0;
    while (running) {
      let result: PassResult = { didWork: false };
      wantedSince ??= Date.now();
      try {
        result = await opts.pass();
        wantedSince = null;
        if (failures > 0) opts.log.info({ worker: opts.name, failures }, 'worker passes complete again');
        failures = 0;
      } catch (err) {
        failures++;
        logFailedPass(opts, err, failures);
        await sleeper.sleep(backoffDelayMs(failures, PASS_RETRY_SCHEDULE_MS, { scale: 1 }));
        continue;
      }
      if (result.nextDueAt) earliest = Math.min(earliest ?? Infinity, result.nextDueAt.getTime());
      if (result.didWork || !running) continue;
      const now = Date.now();
      // A due time already past means another pass now, not a sleep until the poll: the time
      // may have come while the pass that reported it was still running.
      if (earliest !== null && earliest <= now) {
        earliest = null;
        continue;
      }
      const until = earliest !== null ? Math.min(opts.pollMs, earliest - now) : opts.pollMs;
      await sleeper.sleep(until);
      if (earliest !== null && earliest <= Date.now()) earliest = null;
    }
  }

  const loop: WorkerLoop = {
    async start() {
      if (running) return;
      // Woken by each NOTIFY, and by each (re)LISTEN: notifications sent while the LISTEN
      // connection was down (killed, failed over) are lost, so a pass right after listening again
      // finds what they announced; anything committed later is notified.
      if (opts.wakeOn)
        unlisten = await opts.wakeOn.db.listen(
          opts.wakeOn.channel,
          () => loop.wake(),
          () => loop.wake(),
        );
      running = true;
      done = run();
      opts.log.info({ worker: opts.name, pollMs: opts.pollMs }, 'worker started');
    },
    wake(at?: Date) {
      if (at && at.getTime() > Date.now()) {
        earliest = Math.min(earliest ?? Infinity, at.getTime());
        return;
      }
      sleeper.wake();
    },
    async stop() {
      const wasRunning = running;
      running = false;
      sleeper.interrupt();
      await done;
      await unlisten?.();
      if (wasRunning) opts.log.info({ worker: opts.name }, 'worker stopped');
    },
    stalledMs() {
      return running && wantedSince !== null ? Date.now() - wantedSince : 0;
    },
  };
  return loop;
}

/**
 * A failed pass: an error of ours is logged every time; a database fault (the database, its disk
 * or the way to it cannot do the work now) once when the failures begin, as they repeat every
 * few seconds until it is back (the faults themselves are counted and logged by health/).
 */
function logFailedPass(opts: { name: string; log: Logger }, err: unknown, failures: number): void {
  const reason = databaseFault(err);
  if (reason === null) opts.log.error({ err, worker: opts.name, failures }, 'worker pass failed');
  else if (failures === 1)
    opts.log.warn(
      { err, worker: opts.name, reason },
      'worker pass failed: database unavailable; retrying until it is back',
    );
}

/** A sleep that a wake-up ends early; a wake-up while awake makes the next sleep return at once. */
function createSleeper() {
  let timer: NodeJS.Timeout | null = null;
  let wakeUp: (() => void) | null = null;
  let woken = false;
  return {
    sleep(ms: number): Promise<void> {
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
    },
    wake() {
      if (wakeUp) wakeUp();
      else woken = true;
    },
    /** Ends the current sleep, if any (and nothing else). */
    interrupt() {
      if (wakeUp) wakeUp();
    },
  };
}

export type LeasedWorker<R> = {
  /** The lease holder's name: unique per process and worker. */
  workerId: string;
  start(): Promise<void>;
  /** Ends the loop, lets work in flight finish and be recorded, then releases every lease. */
  stop(): Promise<void>;
  wake(at?: Date): void;
  /** Counts one piece of work in flight until the returned function is called (which wakes the loop). */
  begin(): () => void;
  inFlight(): number;
  /** Queues an outcome; outcomes are written together, many to a transaction. */
  record(outcome: R): Promise<void>;
  /** The longer of the loop's stall (WorkerLoop.stalledMs) and the age of the oldest outcome batch being written. */
  stalledMs(): number;
};

export function createLeasedWorker<R>(
  name: string,
  /** `channel`: the NOTIFY channel on which new work is announced. */
  looping: { db: Pick<Db, 'listen'>; log: Logger; pollMs: number; channel: string },
  opts: {
    /** Claims due rows and starts acting on them (with `begin` for work that outlives the pass). */
    pass: () => Promise<PassResult>;
    /** Writes a batch of outcomes in one transaction; returns when the rows are due again. */
    write: (workerId: string, outcomes: R[]) => Promise<(Date | null)[]>;
    /** Batches written at once (each in its own transaction). */
    writeConcurrency: number;
    /** On stop: drops claimed work not started yet (its lease is released with the others). */
    dropUnstarted: () => void;
    /** Gives back every lease the worker holds, so others need not wait for expiry. */
    releaseLeases: (workerId: string) => Promise<void>;
  },
): LeasedWorker<R> {
  const { db, log, pollMs, channel } = looping;
  const workerId = `${os.hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  let inFlight = 0;
  const outcomes = createGroupCommit<R, void>(
    async (items) => {
      const due = await opts.write(workerId, items);
      for (const at of due) if (at) worker.wake(at);
      return items.map(() => undefined);
    },
    { maxBatch: 500, maxInFlight: opts.writeConcurrency },
  );
  const worker = createWorkerLoop({ name, pollMs, log, pass: opts.pass, wakeOn: { db, channel } });
  return {
    workerId,
    start: () => worker.start(),
    wake: (at) => worker.wake(at),
    begin() {
      inFlight++;
      return () => {
        inFlight--;
        worker.wake();
      };
    },
    inFlight: () => inFlight,
    record: (outcome) => outcomes.submit(outcome),
    stalledMs: () => Math.max(worker.stalledMs(), outcomes.oldestInFlightMs()),
    async stop() {
      await worker.stop();
      opts.dropUnstarted();
      while (inFlight > 0) await new Promise((r) => setTimeout(r, 20));
      await outcomes.drain();
      await opts.releaseLeases(workerId);
    },
  };
}
