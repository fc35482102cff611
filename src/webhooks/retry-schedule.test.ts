import { describe, expect, it } from 'vitest';

import { backoffDelayMs } from '../shared/backoff.js';
import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_SCHEDULE_MS } from './deliverer.js';

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
