// npm run bench, part 4b: forwarding rules' regular expressions (issue 21, item 1). What the worst
// accepted patterns cost on the capped text when run on the event loop (as before the fix), then
// what matching an account's rules against each inbound message holds the event loop for now
// (matching runs in the rule matcher's worker): the synchronous part of each message's match call
// and the event loop's delay while messages are matched, p50/p99/max.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import { RE2JS } from 're2js';

import { checkPattern, MAX_MATCH_TEXT } from '../src/inbound/forwarding-match.js';
import { createRuleMatcher } from '../src/inbound/rule-matcher.js';
import { MAX_RULES } from '../src/inbound/settings-service.js';

const MESSAGES = Number(process.env.BENCH_REGEX_MESSAGES ?? 200);
const IN_FLIGHT = 10;

/** The issue's pattern (refused now): three 1,000-fold repetitions, then `z`. */
const ISSUE_PATTERN = `${'(?:\\w|\\d|[a-z]|\\pL){1000}'.repeat(3)}z`;
/** Accepted patterns meant to be slow: at the repetition and program size limits, DFA blow-up. */
const CANDIDATES = [
  '(?:\\pL|\\pN)*\\pL(?:\\pL|\\pN){100}!',
  '[\\pL\\pN]*\\pL[\\pL\\pN]{100}!',
  `${'\\pL{100}'.repeat(4)}\\pL{98}`,
  '(?:\\w|\\d|[a-z]|\\pL){100}z',
  '.{100}z',
  '(?:\\pL|\\pN|\\pM|\\pS|\\pP)*\\pL(?:\\pL|\\pN){100}!',
  '(?:a|b)*a(?:a|b){100}!',
];

function adversarial(length: number, a: string, b: string, seed = 11): string {
  return Array.from({ length }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % 2 ? a : b;
  }).join('');
}
const TEXTS = [adversarial(10_000, 'ж', '٣'), adversarial(10_000, 'a', 'b'), 'x'.repeat(10_000)];

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};
const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`;

/** As before the fix: compiled, then matched with find() over the first 10,000 characters. */
function inlineBefore(pattern: string, text: string): number {
  const t0 = performance.now();
  RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE).matcher(text.slice(0, 10_000)).find();
  return performance.now() - t0;
}

function inline(pattern: string, text: string): number {
  const t0 = performance.now();
  RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE).test(text);
  return performance.now() - t0;
}

async function main() {
  console.log(`## regular expressions (bench/regex.ts), ${MESSAGES} messages, ${IN_FLIGHT} in flight\n`);
  const before = Math.max(...TEXTS.map((t) => inlineBefore(ISSUE_PATTERN, t)));
  console.log(`issue pattern on the event loop, 10,000 characters (before; refused now): ${ms(before)}`);
  console.log(`  refused as: ${checkPattern({ type: 'regex', pattern: ISSUE_PATTERN, caseSensitive: false })}\n`);

  // The worst accepted pattern: each candidate on each text (capped), on the event loop, best of 3.
  console.log('| accepted pattern | on the event loop, 4,096 characters (worst text, best of 3) |');
  console.log('|---|---|');
  let worst = { pattern: '', text: '', cost: 0 };
  for (const pattern of CANDIDATES) {
    if (checkPattern({ type: 'regex', pattern, caseSensitive: false })) throw new Error(`not accepted: ${pattern}`);
    let cost = 0;
    let text = '';
    for (const t of TEXTS) {
      const capped = t.slice(0, MAX_MATCH_TEXT);
      const c = Math.min(inline(pattern, capped), inline(pattern, capped), inline(pattern, capped));
      if (c > cost) [cost, text] = [c, t];
    }
    console.log(`| \`${pattern}\` | ${ms(cost)} |`);
    if (cost > worst.cost) worst = { pattern, text, cost };
  }
  console.log(`\nworst accepted: \`${worst.pattern}\` (${ms(worst.cost)} per match on the event loop)\n`);

  // Now: each message against an account's rules through the matcher, 10 messages in flight.
  const typical = [
    { type: 'contains' as const, pattern: 'refund', caseSensitive: false },
    { type: 'regex' as const, pattern: 'order\\s*#?\\d{6,10}', caseSensitive: false },
  ];
  // Distinct rules with the same program (non-capturing groups compile to nothing), so that each
  // has its own compiled pattern and cold DFA; each message a different text of the worst kind.
  const variant = (i: number) => ({
    type: 'regex' as const,
    pattern: `${'(?:'.repeat(i)}${worst.pattern}${')'.repeat(i)}`,
    caseSensitive: false,
  });
  const [a, b] = [...new Set(worst.text.slice(0, 2))];
  const texts = Array.from({ length: 50 }, (_, i) =>
    worst.text === TEXTS[2] ? worst.text : adversarial(10_000, a!, b ?? a!, 100 + i),
  );
  const scenarios = [
    { name: '1 worst rule + 2 typical', rules: [variant(0), ...typical] },
    {
      name: `${MAX_RULES} distinct rules, all the worst`,
      rules: Array.from({ length: MAX_RULES }, (_, i) => variant(i)),
    },
  ];
  // The machine's own noise: the event loop's delay over 3 s with nothing to do.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((r) => setTimeout(r, 3000));
  idle.disable();
  console.log(
    `event-loop delay with nothing running (the machine's noise): p50 ${ms(idle.percentile(50) / 1e6)}, ` +
      `p99 ${ms(idle.percentile(99) / 1e6)}, max ${ms(idle.max / 1e6)}\n`,
  );
  console.log(
    '| rules per message | event-loop hold per message p50 / p99 / max | event-loop delay p50 / p99 / max | answer time per message (queue + worker) p50 / p99 / max | over budget |',
  );
  console.log('|---|---|---|---|---|');
  for (const s of scenarios) {
    const matcher = createRuleMatcher();
    await matcher.match('warm', s.rules.slice(0, 1), 'warm up');
    const holds: number[] = [];
    const latencies: number[] = [];
    let exceeded = 0;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    let next = 0;
    const customers = ['c1', 'c2', 'c3'];
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < MESSAGES) {
          const i = next++;
          const t0 = performance.now();
          const pending = matcher.match(customers[i % customers.length]!, s.rules, texts[i % texts.length]!);
          holds.push(performance.now() - t0);
          const r = await pending;
          latencies.push(performance.now() - t0);
          if (r.exceeded) exceeded++;
        }
      }),
    );
    delay.disable();
    await matcher.close();
    const d = (p: number) => delay.percentile(p) / 1e6;
    console.log(
      `| ${s.name} | ${ms(q(holds, 0.5))} / ${ms(q(holds, 0.99))} / ${ms(Math.max(...holds))} | ` +
        `${ms(d(50))} / ${ms(d(99))} / ${ms(delay.max / 1e6)} | ` +
        `${ms(q(latencies, 0.5))} / ${ms(q(latencies, 0.99))} / ${ms(Math.max(...latencies))} | ${exceeded} of ${MESSAGES} |`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
