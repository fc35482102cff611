import { afterAll, describe, expect, it } from 'vitest';

import {
  checkPattern,
  expansionOf,
  matchesPlain,
  MAX_MATCH_TEXT,
  MAX_PROGRAM_SIZE,
  MAX_REPEAT,
} from './forwarding-match.js';
import { createRuleMatcher } from './rule-matcher.js';

// The pattern of issue 21: three 1,000-fold repetitions, seconds of event loop per 10,000 characters.
export const ISSUE_PATTERN = `${'(?:\\w|\\d|[a-z]|\\pL){1000}'.repeat(3)}z`;

/** Compiles to 500 instructions: the largest program accepted. */
const LIMIT_PATTERN = `${'\\pL{100}'.repeat(4)}\\pL{98}`;

function adversarial(): string {
  let seed = 7;
  return Array.from({ length: MAX_MATCH_TEXT }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % 2 ? 'ж' : '٣';
  }).join('');
}

const regex = (pattern: string, caseSensitive = false) => ({ type: 'regex' as const, pattern, caseSensitive });

describe('forwarding conditions', () => {
  // A generous budget: these tests are about which patterns are accepted and what they match, and a
  // compile past 200 ms on a loaded machine is refused as too costly; the budget has tests of its own below.
  const matcher = createRuleMatcher({ budgetMs: 5_000 });
  afterAll(() => matcher.close());

  it('matches contains, starts with and regex, with or without case', async () => {
    expect(matchesPlain({ type: 'contains', pattern: 'Order', caseSensitive: false }, 'my order #12')).toBe(true);
    expect(matchesPlain({ type: 'contains', pattern: 'Order', caseSensitive: true }, 'my order #12')).toBe(false);
    expect(matchesPlain({ type: 'starts_with', pattern: 'stop', caseSensitive: false }, 'STOP please')).toBe(true);
    expect(matchesPlain({ type: 'starts_with', pattern: 'stop', caseSensitive: false }, 'please stop')).toBe(false);
    const r = await matcher.match(
      'c',
      [
        regex('#\\d{2,}'),
        { type: 'contains', pattern: 'ORDER', caseSensitive: false },
        regex('^ORDER', true),
        regex('^order'),
      ],
      'order #12',
    );
    expect(r).toEqual({ matched: [true, true, false, true], exceeded: false });
    expect((await matcher.match('c', [regex('^\\d+$')], null)).matched).toEqual([false]);
  });

  it('runs catastrophic-backtracking patterns in linear time', async () => {
    const evil = regex('(a+)+$', true);
    // A backtracking engine would not finish this within the test's timeout (hours).
    expect((await matcher.match('c', [evil, evil], `${'a'.repeat(4000)}!`)).matched).toEqual([false, false]);
    expect((await matcher.match('c', [evil], 'aaaa')).matched).toEqual([true]);
  });

  it('matches only the first MAX_MATCH_TEXT characters', async () => {
    const text = `${'x'.repeat(MAX_MATCH_TEXT - 3)}needle`;
    expect(matchesPlain({ type: 'contains', pattern: 'nee', caseSensitive: true }, text)).toBe(true);
    expect(matchesPlain({ type: 'contains', pattern: 'needle', caseSensitive: true }, text)).toBe(false);
    expect((await matcher.match('c', [regex('nee'), regex('needle')], text)).matched).toEqual([true, false]);
  });

  it('refuses unsupported or oversized patterns', async () => {
    expect(await matcher.check('c', regex('(?<=x)a'))).toMatch(/not a supported regular expression/);
    expect(await matcher.check('c', regex('(a)\\1'))).toMatch(/not a supported/);
    expect(checkPattern({ type: 'contains', pattern: 'x'.repeat(501), caseSensitive: false })).toMatch(/1 to 500/);
    expect(await matcher.check('c', regex('ok.*'))).toBeNull();
    expect(await matcher.check('c', { type: 'contains', pattern: '((', caseSensitive: false })).toBeNull();
  });

  it('refuses the issue pattern for its repetitions, before compiling it', () => {
    expect(checkPattern(regex(ISSUE_PATTERN))).toMatch(/at most 100 copies/);
    expect(expansionOf(ISSUE_PATTERN).repeat).toBe(1000);
  });

  it('counts repetitions as re2js expands them, nested ones multiplied', () => {
    expect(expansionOf('(?:a{10}){20}').repeat).toBe(200);
    expect(expansionOf('((a{5}){3}b{2}){2}').repeat).toBe(30);
    expect(expansionOf('x{2,30}').repeat).toBe(30);
    // Braces that are no repetition: escaped, in a class, quoted, after an alternation bar.
    for (const p of ['\\{5000}', '[{5000}]', '\\Qa{999}\\E', 'a|{5000}', '\\p{Greek}'])
      expect(expansionOf(p).repeat).toBe(1);
    expect(checkPattern(regex(`a{${MAX_REPEAT}}`))).toBeNull();
    expect(checkPattern(regex(`a{${MAX_REPEAT + 1}}`))).toMatch(/at most 100 copies/);
    expect(checkPattern(regex('(?:a{10}){11}'))).toMatch(/at most 100 copies/);
  });

  it('accepts a program of MAX_PROGRAM_SIZE instructions and refuses one more', async () => {
    // re2js: one instruction per copy of `\pL`, plus two.
    const at = `${'\\pL{100}'.repeat(4)}\\pL{${MAX_PROGRAM_SIZE - 402}}`;
    const over = `${'\\pL{100}'.repeat(4)}\\pL{${MAX_PROGRAM_SIZE - 401}}`;
    expect(await matcher.check('c', regex(at))).toBeNull();
    expect(await matcher.check('c', regex(over))).toMatch(/compiles to 501 instructions, at most 500/);
  });

  it('keeps typical keyword and order-number patterns', async () => {
    for (const p of [
      '\\b(?:refund|cancel|stop|unsubscribe|complaint|invoice|delivery|return)\\b',
      'order\\s*(?:no\\.?|number|#)?\\s*\\d{6,10}',
      '[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}',
      '^(?:hi|hello|hey)\\b',
      '\\b[A-Z]{2}\\d{8}\\b',
    ])
      expect(await matcher.check('c', regex(p)), p).toBeNull();
  });

  it("serves customers in turn: one customer's queued jobs do not hold another's back", async () => {
    const order: string[] = [];
    const job = (customer: string, name: string, pattern: string) =>
      matcher.match(customer, [regex(pattern)], 'abc '.repeat(1000)).then(() => order.push(name));
    const waiting = [1, 2, 3, 4].map((i) => job('heavy', `heavy${i}`, '(?:\\pL|\\pN)*\\pL(?:\\pL|\\pN){60}!'));
    waiting.push(job('light', 'light', 'abc'));
    await Promise.all(waiting);
    // heavy1 was already running; light goes next, before the rest of heavy's line.
    expect(order.indexOf('light')).toBeLessThanOrEqual(1);
  });

  it("keeps a slow pattern per customer: one customer's stopped job does not switch off another's same rule", async () => {
    // A budget a short text's job (a fresh worker compiling the pattern) meets on a loaded machine,
    // and a job of the same pattern 20,000 times over the longest text does not.
    const matcherOf = createRuleMatcher({ budgetMs: 1000 });
    try {
      const pattern = regex('(?:\\pL|\\pN)*\\pL(?:\\pL|\\pN){60}!');
      const flood = Array.from({ length: 20_000 }, () => pattern);
      const a = await matcherOf.match('tenant-a', flood, adversarial());
      expect(a.exceeded).toBe(true);
      expect(matcherOf.restarts()).toBe(1);
      // Tenant A's pattern is skipped for A now …
      expect(await matcherOf.match('tenant-a', [pattern], `${'ж'.repeat(61)}!`)).toEqual({
        matched: [false],
        exceeded: true,
      });
      // … but tenant B's rule with the same pattern text still runs and matches.
      expect(await matcherOf.match('tenant-b', [pattern], `${'ж'.repeat(61)}!`)).toEqual({
        matched: [true],
        exceeded: false,
      });
      expect(matcherOf.restarts()).toBe(1);
    } finally {
      await matcherOf.close();
    }
  });

  it('stops a job past its budget, keeps what it found, and goes on with a fresh worker', async () => {
    const tight = createRuleMatcher({ budgetMs: 50 });
    try {
      // Ten distinct rules of 500 instructions, each tens of ms cold on this text: past 50 ms.
      const heavies = Array.from({ length: 10 }, (_, i) => regex(`${'(?:'.repeat(i)}${LIMIT_PATTERN}${')'.repeat(i)}`));
      const conditions = [regex('ж'), ...heavies, { type: 'contains' as const, pattern: 'ж', caseSensitive: true }];
      const text = adversarial();
      const r = await tight.match('c', conditions, text);
      expect(r.exceeded).toBe(true);
      expect(r.matched[0]).toBe(true); // found before the stop
      expect(r.matched.at(-1)).toBe(true); // contains runs inline
      expect(tight.restarts()).toBe(1);
      // The rule running at the stop is skipped for a while: soon no job needs stopping any more.
      let rounds = 0;
      for (let before = -1; before !== tight.restarts() && rounds < 15; rounds++) {
        before = tight.restarts();
        expect((await tight.match('c', conditions, text)).exceeded).toBe(true);
      }
      expect(rounds).toBeLessThan(15);
      // Each stop skips the rule it stopped on, so there is at most one per regex rule. The light
      // rule counts too: on a busy machine the matcher's thread can lose the CPU for 50 ms on any
      // rule (the bound was heavies.length, and failed under load at 11).
      expect(tight.restarts()).toBeLessThanOrEqual(conditions.filter((c) => c.type === 'regex').length);
    } finally {
      await tight.close();
    }
    // The shared matcher's budget is generous for ordinary work: jobs are answered normally.
    expect((await matcher.match('c', [regex('b')], 'abc')).matched).toEqual([true]);
  });
});
