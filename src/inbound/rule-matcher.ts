// Regular expressions of forwarding rules run here, in one worker thread, never on the event loop:
// re2js is linear in the text, but its constant can still be milliseconds per kilobyte for a
// pattern of a few hundred instructions (issue 21: seconds for one accepted pattern). One job is
// one inbound message against all of its account's regex rules (or one pattern to compile); each
// job has a time budget: past it the worker is terminated, the job's rules count as not matching,
// and a fresh worker takes the next job. The event loop only posts the job and reads the answer.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

import { checkPattern, checkProgramSize, type Condition, matchedText, matchesPlain } from './forwarding-match.js';

/**
 * A job (one message's regex rules, or one compile) running longer is stopped. It bounds the
 * worker's time per message (what one tenant can take from the others' forwarding), not the event
 * loop's, which only posts the job; generous enough that a loaded machine does not drop matches.
 */
export const MATCH_BUDGET_MS = 200;
/** A customer's jobs waiting beyond this many are answered at once as over budget (a flood queues no memory). */
export const MAX_QUEUED_JOBS = 200;

// Plain JavaScript run by the worker (eval: no build step, the same under tsx, vitest and dist).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2js);
const cache = new Map();
const flags = (caseSensitive) => (caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE);
function compiled(pattern, caseSensitive) {
  const key = (caseSensitive ? '1:' : '0:') + pattern;
  let re = cache.get(key);
  if (re === undefined) {
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value);
    re = RE2JS.compile(pattern, flags(caseSensitive));
  } else cache.delete(key);
  cache.set(key, re);
  return re;
}
parentPort.on('message', (job) => {
  if (job.kind === 'compile') {
    try {
      parentPort.postMessage({ id: job.id, size: RE2JS.compile(job.pattern, flags(job.caseSensitive)).programSize() });
    } catch (err) {
      parentPort.postMessage({ id: job.id, error: String((err && err.message) || err) });
    }
    return;
  }
  // Results go to shared memory rule by rule, so that a job stopped midway keeps what it found
  // and the rule it was running is known: progress[0] = rules done, progress[1 + i] = matched.
  job.rules.forEach((r, i) => {
    let hit = false;
    try {
      if (!r.skip) hit = compiled(r.pattern, r.caseSensitive).test(job.text);
    } catch {}
    job.progress[1 + i] = hit ? 1 : 0;
    Atomics.store(job.progress, 0, i + 1);
  });
  parentPort.postMessage({ id: job.id });
});
RE2JS.compile('^(?:a|b)+\\\\d{2}$', RE2JS.CASE_INSENSITIVE).test('xabab12'); // load and warm the engine first
parentPort.postMessage({ ready: true });
`;

type Job =
  | {
      kind: 'match';
      /** skip: set when the job starts, for a rule stopped (in another job) since it was queued. */
      rules: { pattern: string; caseSensitive: boolean; skip?: boolean }[];
      text: string;
      progress: Int32Array;
    }
  | { kind: 'compile'; pattern: string; caseSensitive: boolean };
/** 'stopped': ran past the budget, or the worker died running it; 'exceeded': never ran (queue full). */
type Answer = { size?: number; error?: string } | 'stopped' | 'exceeded';

/** A pattern that was running when its job was stopped is skipped (counts as not matching) this long. */
export const SLOW_PATTERN_MS = 10 * 60_000;

export type MatchResult = {
  /** One per condition, in order. */
  matched: boolean[];
  /**
   * Some regex rules were not run to the end (the job ran out of its time budget, the worker
   * failed, the customer's queue was full, or the rule was stopped recently): they counted as not
   * matching.
   */
  exceeded: boolean;
};

// Patterns whose job was stopped while they ran: skipped until the time kept, so that one costly
// rule does not cost a stopped job and a new worker on every message. Kept per customer: the
// pattern's cost was met on that customer's messages and budget, and another customer with the
// same pattern text must not have its rule switched off by it (issue #32).
function slowPatterns() {
  const slow = new Map<string, number>();
  const slowKey = (customerId: string, c: Condition) => `${customerId}:${c.caseSensitive ? 1 : 0}:${c.pattern}`;
  const isSlow = (customerId: string, c: Condition) => {
    const key = slowKey(customerId, c);
    const until = slow.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    slow.delete(key);
    return false;
  };
  const markSlow = (customerId: string, c: Condition) => {
    if (slow.size >= 10_000) slow.delete(slow.keys().next().value!);
    slow.set(slowKey(customerId, c), Date.now() + SLOW_PATTERN_MS);
  };
  return { isSlow, markSlow };
}

type Run = (key: string, job: Job) => Promise<Answer>;

/** Each condition against the text's first MAX_MATCH_TEXT characters; regex ones in the worker. */
async function matchConditions(
  ctx: { run: Run } & ReturnType<typeof slowPatterns>,
  customerId: string,
  conditions: Condition[],
  text: string | null,
): Promise<MatchResult> {
  const { run, isSlow, markSlow } = ctx;
  if (text === null) return { matched: conditions.map(() => false), exceeded: false };
  const t = matchedText(text);
  const matched = conditions.map((c) => c.type !== 'regex' && matchesPlain(c, t));
  let exceeded = false;
  const regex = conditions.flatMap((c, i) => {
    if (c.type !== 'regex') return [];
    if (!isSlow(customerId, c)) return [i];
    exceeded = true;
    return [];
  });
  if (regex.length === 0) return { matched, exceeded };
  const progress = new Int32Array(new SharedArrayBuffer(4 * (regex.length + 1)));
  const rules: { pattern: string; caseSensitive: boolean; skip?: boolean }[] = regex.map((i) => ({
    pattern: conditions[i]!.pattern,
    caseSensitive: conditions[i]!.caseSensitive,
  }));
  const answer = await run(customerId, { kind: 'match', rules, text: t, progress });
  const done = Atomics.load(progress, 0);
  regex.forEach((ci, k) => (matched[ci] = k < done && progress[1 + k] === 1));
  if (done < regex.length || rules.some((r) => r.skip)) exceeded = true;
  if (answer === 'stopped' && done < regex.length) markSlow(customerId, conditions[regex[done]!]!);
  return { matched, exceeded };
}

/** The reason a condition is refused (length, repetitions, compiled program size, syntax), or null. */
async function checkCondition(run: Run, budgetMs: number, customerId: string, c: Condition): Promise<string | null> {
  const reason = checkPattern(c);
  if (reason || c.type !== 'regex') return reason;
  const answer = await run(customerId, { kind: 'compile', pattern: c.pattern, caseSensitive: c.caseSensitive });
  if (answer === 'stopped' || answer === 'exceeded')
    return `is too large: compiling it took longer than ${budgetMs} ms`;
  if (answer.error !== undefined)
    return `is not a supported regular expression (RE2 syntax): ${answer.error}`.slice(0, 300);
  return checkProgramSize(answer.size!);
}

type Queues = Map<string, { job: Job; done: (a: Answer) => void }[]>;

function startWorker(re2js: string, cacheSize: number): Worker {
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { re2js, cacheSize },
    // A pattern's lazy DFA may grow to 8 MB: the cache is bounded by count, memory by this.
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  w.unref();
  return w;
}

/**
 * The next job to run, taken off its queue. The customer first in line runs one job, then goes to
 * the back of the line; the customer served last waits for any other.
 */
function takeTurn(queues: Queues, lastKey: string | null) {
  let key = queues.keys().next().value!;
  if (key === lastKey && queues.size > 1) key = [...queues.keys()][1]!;
  const jobs = queues.get(key)!;
  const { job, done } = jobs.shift()!;
  queues.delete(key);
  if (jobs.length > 0) queues.set(key, jobs);
  return { key, job, done };
}

/** Queues a job for the customer (or answers 'exceeded' when its queue is full) and runs the next one. */
function enqueue(queues: Queues, maxQueued: number, pump: () => void, key: string, job: Job): Promise<Answer> {
  const jobs = queues.get(key) ?? [];
  if (jobs.length >= maxQueued) return Promise.resolve('exceeded');
  return new Promise((done) => {
    jobs.push({ job, done });
    if (!queues.has(key)) queues.set(key, jobs);
    pump();
  });
}

export type RuleMatcher = ReturnType<typeof createRuleMatcher>;

export function createRuleMatcher(opts: { budgetMs?: number; cacheSize?: number; maxQueued?: number } = {}) {
  const budgetMs = opts.budgetMs ?? MATCH_BUDGET_MS;
  const maxQueued = opts.maxQueued ?? MAX_QUEUED_JOBS;
  const re2js = createRequire(import.meta.url).resolve('re2js');
  // Waiting jobs per customer, served in turn: a customer with costly rules or a flood of messages
  // takes at most its share of the worker from the others.
  const queues: Queues = new Map();
  let worker: Worker | null = null;
  let ready = false; // the budget starts once the worker has loaded re2js, not while it starts
  let current: { id: number; done: (a: Answer) => void; timer: NodeJS.Timeout } | null = null;
  let lastKey: string | null = null;
  const { isSlow, markSlow } = slowPatterns();
  let nextId = 1;
  let restarts = 0;

  function spawn(): Worker {
    const w = startWorker(re2js, opts.cacheSize ?? 500);
    w.on('message', (m: { ready?: true; id?: number; size?: number; error?: string }) => {
      if (m.ready) {
        if (worker === w) ready = true;
        return pump();
      }
      if (!current || m.id !== current.id) return;
      finish(m);
    });
    const lost = () => {
      if (worker !== w) return;
      const started = ready;
      worker = null;
      ready = false;
      if (current) return finish('stopped');
      // A worker that never started would fail again: answer what waits instead of respawning.
      if (!started) {
        const waiting = [...queues.values()].flat();
        queues.clear();
        for (const q of waiting) q.done('exceeded');
      } else pump();
    };
    w.on('error', lost);
    w.on('exit', lost);
    return w;
  }

  function finish(answer: Answer) {
    const c = current!;
    clearTimeout(c.timer);
    current = null;
    c.done(answer);
    pump();
  }

  function pump() {
    if (current || queues.size === 0) return;
    if (!worker) {
      ready = false;
      worker = spawn();
    }
    if (!ready) return;
    const { key, job, done } = takeTurn(queues, lastKey);
    lastKey = key;
    const id = nextId++;
    const timer = setTimeout(() => {
      if (current?.id !== id) return;
      const w = worker;
      worker = null; // its 'exit' is no longer ours
      restarts++;
      void w?.terminate();
      finish('stopped');
    }, budgetMs);
    current = { id, done, timer };
    if (job.kind === 'match') for (const r of job.rules) r.skip = isSlow(key, { type: 'regex', ...r });
    worker!.postMessage({ id, ...job });
  }

  const run: Run = (key, job) => enqueue(queues, maxQueued, pump, key, job);

  return {
    /** Each condition against the text's first MAX_MATCH_TEXT characters; regex ones in the worker. */
    match: (customerId: string, conditions: Condition[], text: string | null) =>
      matchConditions({ run, isSlow, markSlow }, customerId, conditions, text),

    /** The reason a condition is refused (length, repetitions, compiled program size, syntax), or null. */
    check: (customerId: string, c: Condition) => checkCondition(run, budgetMs, customerId, c),

    /** Workers replaced after running out of budget (for tests and the bench). */
    restarts: () => restarts,

    async close() {
      const w = worker;
      worker = null;
      await w?.terminate();
    },
  };
}

let shared: RuleMatcher | null = null;

/** The process's matcher: one worker for every tenant's rules, started on first use. */
export function ruleMatcher(): RuleMatcher {
  shared ??= createRuleMatcher();
  return shared;
}
