import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { backoffDelayMs, doublingScheduleMs, SEND_SCHEDULE_MS } from './backoff.js';

describe('backoffDelayMs', () => {
  it('follows the schedule, then stays on its last step', () => {
    const mid = { scale: 1, random: () => 0.5 };
    expect([1, 2, 3, 4, 5, 9].map((a) => backoffDelayMs(a, SEND_SCHEDULE_MS, mid))).toEqual([
      5000, 30000, 120000, 600000, 1800000, 1800000,
    ]);
  });
  it('jitters within ±20 % and scales', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        fc.double({ min: 0.001, max: 10, noNaN: true }),
        (attempt, r, scale) => {
          const base = SEND_SCHEDULE_MS[Math.min(attempt, SEND_SCHEDULE_MS.length) - 1]!;
          const d = backoffDelayMs(attempt, SEND_SCHEDULE_MS, { scale, random: () => r });
          expect(d).toBeGreaterThanOrEqual(Math.floor(base * 0.8 * scale));
          expect(d).toBeLessThanOrEqual(Math.ceil(base * 1.2 * scale));
        },
      ),
    );
  });
  it('honours a minimum asked for by the peer', () => {
    expect(backoffDelayMs(1, SEND_SCHEDULE_MS, { scale: 1, jitter: 0, minMs: 64_000 })).toBe(64_000);
    expect(backoffDelayMs(1, SEND_SCHEDULE_MS, { scale: 0.001, jitter: 0, minMs: 64_000 })).toBe(64);
  });
});

describe('doublingScheduleMs', () => {
  it('doubles from the first delay up to the cap', () => {
    expect(doublingScheduleMs(60_000, 1_800_000)).toEqual([60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000]);
    expect(doublingScheduleMs(60_000, 60_000)).toEqual([60_000]);
    expect(doublingScheduleMs(1_000, 4_000)).toEqual([1_000, 2_000, 4_000]);
  });
});
