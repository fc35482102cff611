import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_SCHEDULE_MS } from '../webhooks/deliverer.js';
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

describe('the webhook retry schedule', () => {
  const HOUR = 3_600_000;
  const total = (random: () => number, scale = 1) =>
    Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, (_, i) =>
      backoffDelayMs(i + 1, WEBHOOK_SCHEDULE_MS, { scale, random }),
    ).reduce((a, b) => a + b, 0);

  it('has 8 attempts: about 30 s, 2 min, 8 min, 32 min, 2 h, then every 4 h', () => {
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(8);
    const mid = { scale: 1, random: () => 0.5 };
    expect(Array.from({ length: 7 }, (_, i) => backoffDelayMs(i + 1, WEBHOOK_SCHEDULE_MS, mid))).toEqual([
      30_000,
      120_000,
      480_000,
      1_920_000,
      2 * HOUR,
      4 * HOUR,
      4 * HOUR,
    ]);
  });

  it('spans a window of about 12 hours at scale 1, whatever the jitter, and scales with RETRY_TIME_SCALE', () => {
    // Without jitter: 10 h 42 min; with ±20 % jitter: 8 h 34 min to 12 h 51 min.
    expect(total(() => 0.5)).toBe(38_550_000);
    expect(total(() => 0.5)).toBeGreaterThanOrEqual(10 * HOUR);
    expect(total(() => 0.5)).toBeLessThanOrEqual(13 * HOUR);
    expect(total(() => 0)).toBeGreaterThanOrEqual(8 * HOUR);
    expect(total(() => 0.999999)).toBeLessThanOrEqual(13 * HOUR);
    expect(total(() => 0.5, 0.0001)).toBe(3855);
  });
});
