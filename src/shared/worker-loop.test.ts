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
    const loop = createWorkerLoop({
      name: 'test',
      pollMs: 60_000,
      log: pino({ level: 'silent' }),
      async pass(): Promise<PassResult> {
        passes.push(Date.now());
        return passes.length === 1 ? { didWork: false, nextDueAt: new Date(Date.now() + 200) } : { didWork: false };
      },
    });
    await loop.start();
    try {
      const deadline = Date.now() + 5_000;
      while (passes.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(passes.length).toBeGreaterThanOrEqual(2);
      expect(passes[1]! - passes[0]!).toBeGreaterThanOrEqual(190);
      // Then it sleeps: a timer that fired a millisecond early may add one more pass (the time had
      // not quite come for the first), never a loop of them.
      await new Promise((r) => setTimeout(r, 300));
      expect(passes.length).toBeLessThanOrEqual(3);
    } finally {
      await loop.stop();
    }
  });
});
