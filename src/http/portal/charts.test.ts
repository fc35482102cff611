// The usage chart: its axis rounded up, the month summed day by day, the quota a line or a marker.
import { describe, expect, it } from 'vitest';

import { cumulative, niceCeil, usageChart } from './charts.js';

describe('usage chart scale', () => {
  it('rounds an axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 1.1, 3, 5, 5.5, 11, 240, 20_000, 20_001].map(niceCeil)).toEqual([
      1, 1, 2, 5, 5, 10, 20, 500, 20_000, 50_000,
    ]);
  });

  it('sums the days of a past month to its end', () => {
    const { daysInMonth, points } = cumulative('2026-02', [
      { day: '2026-02-02', n: 3 },
      { day: '2026-02-10', n: 4 },
    ]);
    expect(daysInMonth).toBe(28);
    expect(points).toHaveLength(28);
    expect(points[0]!.total).toBe(0);
    expect(points[8]!.total).toBe(3);
    expect(points.at(-1)!.total).toBe(7);
  });

  it('scales to the data, with the quota a marker above it when far off; a line when near', () => {
    const far = usageChart({ month: '2026-02', days: [{ day: '2026-02-02', n: 40 }], used: 40, limit: 20_000 }).value;
    expect(far).toContain('data-top="50"');
    expect(far).toContain('data-quota-on-scale="false"');
    expect(far).toContain('quota 20,000 (above the scale)');
    const near = usageChart({ month: '2026-02', days: [{ day: '2026-02-02', n: 900 }], used: 900, limit: 1000 }).value;
    expect(near).toContain('data-quota-on-scale="true"');
    expect(near).toContain('data-top="1000"');
    expect(near).toContain('stroke-dasharray');
  });
});
