import { describe, expect, it } from 'vitest';

import { parseSendAt, sendAtProblem } from './schedule.js';

const now = new Date('2026-11-23T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms);
const expires = at(30 * 86400_000);

describe('sendAt bounds', () => {
  it('counts the lead in whole seconds, a started second as a whole one', () => {
    expect(sendAtProblem(at(60_000), now, expires)).toBeNull();
    expect(sendAtProblem(at(59_001), now, expires)).toBeNull(); // "60 s from now", 999 ms in transit
    expect(sendAtProblem(at(59_000), now, expires)?.message).toMatch(/at least 60 seconds/);
    expect(sendAtProblem(at(-5_000), now, expires)?.message).toMatch(/at least 60 seconds/);
  });

  it('refuses more than 35 days ahead, then anything at or after the expiry', () => {
    const far = at(40 * 86400_000);
    expect(sendAtProblem(at(35 * 86400_000), now, far)).toBeNull();
    expect(sendAtProblem(at(35 * 86400_000 + 1000), now, far)?.message).toMatch(/at most 35 days/);
    expect(sendAtProblem(expires, now, expires)?.message).toMatch(/before the message expires/);
    expect(sendAtProblem(at(30 * 86400_000 - 1000), now, expires)).toBeNull();
  });

  it('parses real UTC instants only', () => {
    expect(parseSendAt('2026-12-01T09:30:00Z')?.toISOString()).toBe('2026-12-01T09:30:00.000Z');
    expect(parseSendAt('2026-12-01T09:30:00.5Z')?.toISOString()).toBe('2026-12-01T09:30:00.500Z');
    expect(parseSendAt('2026-02-30T09:30:00Z')).toBeNull();
    expect(parseSendAt('2026-12-01T24:30:00Z')).toBeNull();
  });
});
