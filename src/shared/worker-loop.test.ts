import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { createLeasedWorker, createWorkerLoop, type PassResult } from './worker-loop.js';

const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('worker loop', () => {
  it('runs again at once when the due time a pass reported has already come, whatever the poll', async () => {
    // The dispatcher's race: the pass reports "next due at T" and T has passed by the time the
    // loop decides how long to sleep. The loop must not drop T and sleep the whole poll.
    const passes: number[] = [];
    let reported = false;
    const loop = createWorkerLoop({
      name: 'test',
      pollMs: 60_000,
      log: pino({ level: 'silent' }),
      async pass(): Promise<PassResult> {
        passes.push(Date.now());
        if (reported) return { didWork: false };
        reported = true;
        return { didWork: false, nextDueAt: new Date(Date.now()) };
      },
    });
    await loop.start();
    try {
      const deadline = Date.now() + 5_000;
      while (passes.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(passes.length).toBe(2);
    } finally {
      await loop.stop();
    }
  });

  it('sleeps until a due time still to come, then runs', async () => {
    const passes: number[] = [];
    let firstDue = 0;
    let secondDue = 0;
    // Like the dispatcher, each pass reports the next due time it sees: 200 ms after the first
    // pass, then (once that has come) 300 ms after the pass that found it come, then none.
    const loop = createWorkerLoop({
      name: 'test',
      pollMs: 60_000,
      log: pino({ level: 'silent' }),
      async pass(): Promise<PassResult> {
        const now = Date.now();
        passes.push(now);
        if (firstDue === 0) firstDue = now + 200;
        if (now < firstDue) return { didWork: false, nextDueAt: new Date(firstDue) };
        if (secondDue === 0) secondDue = now + 300;
        if (now < secondDue) return { didWork: false, nextDueAt: new Date(secondDue) };
        return { didWork: false };
      },
    });
    await loop.start();
    try {
      const deadline = Date.now() + 5_000;
      while (passes.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(passes.length).toBeGreaterThanOrEqual(2);
      expect(passes[1]! - passes[0]!).toBeGreaterThanOrEqual(190);
      // Then it sleeps until the next due time: the pass at that time is the signal that the loop
      // went on, and before it there was no loop of passes. A timer that fired a millisecond early
      // may add one more pass to each due time (the time had not quite come).
      const atSecond = () => passes.findIndex((p) => secondDue !== 0 && p >= secondDue);
      while (atSecond() < 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(atSecond()).toBeGreaterThanOrEqual(2);
      expect(atSecond() + 1).toBeLessThanOrEqual(5);
    } finally {
      await loop.stop();
    }
  });

  describe('after the database is lost (a clock the test drives)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('tries a failed pass again every few seconds however long the failures last, and goes on once one completes', async () => {
      vi.useFakeTimers();
      let down = true;
      let passes = 0;
      const lines: string[] = [];
      const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l).msg) });
      const loop = createWorkerLoop({
        name: 'test',
        pollMs: 60_000,
        log,
        async pass(): Promise<PassResult> {
          passes++;
          if (down) throw reset();
          return { didWork: false };
        },
      });
      await loop.start();
      try {
        // A minute of failures: the retries never drift apart (every 5 s, +20 % jitter, at most).
        for (let i = 1; i <= 12; i++) {
          const before = passes;
          await vi.advanceTimersByTimeAsync(6_001);
          expect(passes, `retry ${i}`).toBeGreaterThan(before);
        }
        expect(loop.stalledMs()).toBeGreaterThanOrEqual(72_000);
        down = false;
        const before = passes;
        await vi.advanceTimersByTimeAsync(6_001);
        expect(passes).toBe(before + 1); // then sleeps its poll
        expect(loop.stalledMs()).toBe(0);
        // A database fault is logged when the failures begin, not at every retry.
        expect(lines.filter((l) => l.startsWith('worker pass failed'))).toHaveLength(1);
        expect(lines).toContain('worker passes complete again');
      } finally {
        vi.useRealTimers();
        await loop.stop();
      }
    });

    it('counts a pass that never returns as stalled, and a sleeping loop as not', async () => {
      vi.useFakeTimers();
      let hang = false;
      const loop = createWorkerLoop({
        name: 'test',
        pollMs: 1_000,
        log: pino({ level: 'silent' }),
        pass: () => (hang ? new Promise<PassResult>(() => {}) : Promise.resolve({ didWork: false })),
      });
      await loop.start();
      try {
        await vi.advanceTimersByTimeAsync(500);
        expect(loop.stalledMs()).toBe(0);
        hang = true;
        await vi.advanceTimersByTimeAsync(20_600);
        expect(loop.stalledMs()).toBeGreaterThanOrEqual(20_000);
      } finally {
        vi.useRealTimers();
        void loop.stop();
      }
    });

    it("a leased worker's stall includes an outcome batch that is not written", async () => {
      vi.useFakeTimers();
      const worker = createLeasedWorker<number>(
        'test',
        { db: { listen: async () => async () => {} }, log: pino({ level: 'silent' }), pollMs: 1_000, channel: 'c' },
        {
          pass: async () => ({ didWork: false }),
          write: () => new Promise(() => {}), // a connection that never answers
          writeConcurrency: 1,
          dropUnstarted: () => {},
          releaseLeases: async () => {},
        },
      );
      await worker.start();
      void worker.record(1);
      await vi.advanceTimersByTimeAsync(15_000);
      expect(worker.stalledMs()).toBeGreaterThanOrEqual(14_000);
      vi.useRealTimers();
    });
  });
});
