import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { createWorkerLoop, type PassResult } from './worker-loop.js';

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
});
