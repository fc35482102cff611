import { describe, expect, it } from 'vitest';

import { checkPattern, matches } from './forwarding-match.js';

describe('forwarding conditions', () => {
  it('matches contains, starts with and regex, with or without case', () => {
    expect(matches({ type: 'contains', pattern: 'Order', caseSensitive: false }, 'my order #12')).toBe(true);
    expect(matches({ type: 'contains', pattern: 'Order', caseSensitive: true }, 'my order #12')).toBe(false);
    expect(matches({ type: 'starts_with', pattern: 'stop', caseSensitive: false }, 'STOP please')).toBe(true);
    expect(matches({ type: 'starts_with', pattern: 'stop', caseSensitive: false }, 'please stop')).toBe(false);
    expect(matches({ type: 'regex', pattern: '#\\d{2,}', caseSensitive: false }, 'order #12')).toBe(true);
    expect(matches({ type: 'regex', pattern: '^\\d+$', caseSensitive: false }, null)).toBe(false);
  });
  it('runs catastrophic-backtracking patterns in linear time', () => {
    const evil = { type: 'regex' as const, pattern: '(a+)+$', caseSensitive: true };
    // A backtracking engine would not finish this within the test's timeout (hours).
    expect(matches(evil, `${'a'.repeat(9000)}!`)).toBe(false);
    expect(matches(evil, 'aaaa')).toBe(true);
  });
  it('refuses unsupported or oversized patterns', () => {
    expect(checkPattern({ type: 'regex', pattern: '(?<=x)a', caseSensitive: false })).toMatch(
      /not a supported regular expression/,
    );
    expect(checkPattern({ type: 'regex', pattern: '(a)\\1', caseSensitive: false })).toMatch(/not a supported/);
    expect(checkPattern({ type: 'contains', pattern: 'x'.repeat(501), caseSensitive: false })).toMatch(/1 to 500/);
    expect(checkPattern({ type: 'regex', pattern: 'ok.*', caseSensitive: false })).toBeNull();
  });
});
