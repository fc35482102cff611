// The fault drill's figures per scenario, cut from what the drill recorded over the whole run
// (requests, /readyz samples, the emulator's send arrivals and duplicates, the messages' final
// states), and the printed table with issue #32's targets beside them.
import type { RequestRecord } from './fault-drill-load.js';

/** One scenario's moments (epoch ms): requests started in [windowStart, windowEnd) are its own. */
export type Timeline = {
  name: string;
  windowStart: number;
  faultStart: number;
  faultEnd: number;
  windowEnd: number;
};

export type ReadySample = { t: number; status: number | 'timeout' | 'error' };

export type Recorded = {
  records: RequestRecord[];
  notOffered: number[];
  ready: { api: ReadySample[]; worker: ReadySample[] };
  /** Arrival times of send requests at the emulator. */
  arrivals: number[];
};

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Requests: answered by class, slow ones, 5xx by code. An unanswered request counts as its elapsed time. */
export function requestFigures(records: RequestRecord[], tl: Timeline, timeoutMs: number) {
  const mine = records.filter((r) => r.start >= tl.windowStart && r.start < tl.windowEnd);
  const elapsed = (r: RequestRecord) => r.ms ?? timeoutMs;
  const byClass: Record<string, number> = {};
  const fiveXxCodes: Record<string, number> = {};
  const connectionErrors: Record<string, number> = {};
  let fiveXx = 0;
  let fiveXxLate = 0;
  let failedLate = 0;
  const late = tl.faultEnd + 10_000;
  for (const r of mine) {
    const o = r.outcome;
    const cls = o === null ? 'open' : o.kind === 'answered' ? `${Math.floor(o.status / 100)}xx` : o.kind;
    byClass[cls] = (byClass[cls] ?? 0) + 1;
    if (o?.kind === 'connection') connectionErrors[o.code] = (connectionErrors[o.code] ?? 0) + 1;
    const is5xx = o?.kind === 'answered' && o.status >= 500;
    if (is5xx) {
      fiveXx++;
      const key = `${o.status} ${o.code ?? ''}`.trim();
      fiveXxCodes[key] = (fiveXxCodes[key] ?? 0) + 1;
    }
    if (r.start >= late) {
      if (is5xx) fiveXxLate++;
      if (o === null || o.kind !== 'answered' || o.status >= 500) failedLate++;
    }
  }
  const all = mine.map(elapsed).sort((a, b) => a - b);
  // An instant fault (reset) has no "while": null.
  const duringFault = mine
    .filter((r) => r.start >= tl.faultStart && r.start < tl.faultEnd && tl.faultEnd - tl.faultStart >= 1000)
    .map(elapsed)
    .sort((a, b) => a - b);
  const over = (ms: number) => mine.filter((r) => r.ms === null || r.ms > ms || r.outcome?.kind === 'timeout').length;
  return {
    sent: mine.length,
    byClass,
    maxMs: all.length ? all[all.length - 1]! : null,
    p99Ms: percentile(all, 99),
    p50Ms: percentile(all, 50),
    /** p99 of the requests started while the fault lasted (the slow provider's target). */
    p99DuringFaultMs: percentile(duringFault, 99),
    notAnsweredWithin15s: over(15_000),
    notAnsweredWithin30s: over(30_000),
    fiveXx,
    fiveXxCodes,
    status503: mine.filter((r) => r.outcome?.kind === 'answered' && r.outcome.status === 503).length,
    connectionErrors,
    /** Started 10 s or more after the fault ended. */
    fiveXxFrom10sAfter: fiveXxLate,
    failedFrom10sAfter: failedLate,
  };
}

/** /readyz over the scenario: seconds not 200 and 200 from the fault's start, and each change (s from the fault's start). */
export function readyFigures(samples: ReadySample[], tl: Timeline) {
  const mine = samples.filter((s) => s.t >= tl.windowStart && s.t < tl.windowEnd);
  let not200Ms = 0;
  let ok200Ms = 0;
  const changes: string[] = [];
  let previous: ReadySample['status'] | undefined;
  for (let i = 0; i < mine.length; i++) {
    const s = mine[i]!;
    const next = mine[i + 1]?.t ?? tl.windowEnd;
    if (s.t >= tl.faultStart) {
      if (s.status === 200) ok200Ms += next - s.t;
      else not200Ms += next - s.t;
    }
    if (s.status !== previous) changes.push(`${s.status}@${round((s.t - tl.faultStart) / 1000)}`);
    previous = s.status;
  }
  return { not200Seconds: round(not200Ms / 1000), ok200Seconds: round(ok200Ms / 1000), changes: changes.join(' ') };
}

/** Sends reaching the provider: the first after the fault ended, and the longest silence from the fault's start. */
export function sendFigures(arrivals: number[], tl: Timeline, horizon: number) {
  const after = arrivals.filter((t) => t >= tl.faultStart && t < horizon);
  const first = arrivals.find((t) => t >= tl.faultEnd);
  let gap = 0;
  let prev = tl.faultStart;
  for (const t of after) {
    gap = Math.max(gap, t - prev);
    prev = t;
  }
  gap = Math.max(gap, horizon - prev);
  return {
    firstSendAfterFaultEndMs: first === undefined || first >= horizon ? null : first - tl.faultEnd,
    longestSendGapMs: gap,
  };
}

export type ScenarioReport = {
  name: string;
  timeline: Timeline;
  requests: ReturnType<typeof requestFigures>;
  notOffered: number;
  readyz: { api: ReturnType<typeof readyFigures>; worker: ReturnType<typeof readyFigures> };
  sends: ReturnType<typeof sendFigures> & { peakOpenAtProvider: number | null };
  inFlightAtFault: { leasedMessages: number | null; openAtProvider: number | null };
  /** The provider's accept rate during the fault and watch (null: no limit), and the most connections waiting for it. */
  providerAccept: { perSecond: number | null; peakWaiting: number };
  recovery: { ok: boolean; afterWindowMs: number; restarted: boolean; detail: string };
  messages: {
    accepted: number;
    /** Received by the provider more than once, and the extra sends. */
    duplicated: number;
    extraSends: number;
    /** At the drill's end: still pending or queued, failed, and never received by the provider. */
    notSent: number;
    failed: number;
    failedCodes: Record<string, number>;
    neverReachedProvider: number;
  };
  logs: Record<string, Record<string, number>>;
  loadAvg: number[];
};

const cell = (v: unknown) => (v === null || v === undefined ? 'n/a' : String(v));
const codes = (m: Record<string, number>) =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ') || '-';

/** The table: one column per scenario, one row per figure, the issue's target for each. */
export function printTable(reports: ScenarioReport[]): string[] {
  const rows: [string, (r: ScenarioReport) => unknown, string][] = [
    ['load average (1/5/15 min) at start', (r) => r.loadAvg.map((n) => n.toFixed(1)).join(' '), ''],
    ['requests sent', (r) => r.requests.sent, ''],
    ['  not offered (concurrency cap)', (r) => r.notOffered, ''],
    [
      '  answered 2xx / 4xx / 5xx',
      (r) =>
        `${r.requests.byClass['2xx'] ?? 0} / ${r.requests.byClass['4xx'] ?? 0} / ${r.requests.byClass['5xx'] ?? 0}`,
      '',
    ],
    [
      '  no answer in 40 s / conn. error',
      (r) => `${r.requests.byClass.timeout ?? 0} / ${r.requests.byClass.connection ?? 0}`,
      '',
    ],
    ['longest answer (ms)', (r) => r.requests.maxMs, 'stall ≤ 30000, reset ≤ 15000'],
    ['p99 / p50 (ms)', (r) => `${cell(r.requests.p99Ms)} / ${cell(r.requests.p50Ms)}`, ''],
    ['p99 while the fault lasts (ms)', (r) => r.requests.p99DuringFaultMs, 'slow provider < 500'],
    ['not answered within 15 s', (r) => r.requests.notAnsweredWithin15s, 'reset 0'],
    ['not answered within 30 s', (r) => r.requests.notAnsweredWithin30s, 'stall 0'],
    ['5xx (503)', (r) => `${r.requests.fiveXx} (${r.requests.status503})`, 'reset: 503 allowed; disk: 503 + code'],
    ['5xx codes', (r) => codes(r.requests.fiveXxCodes), ''],
    ['5xx from 10 s after the fault', (r) => r.requests.fiveXxFrom10sAfter, 'stall 0'],
    ['  any failure from 10 s after', (r) => r.requests.failedFrom10sAfter, ''],
    [
      'duplicate sends (messages / extra)',
      (r) => `${r.messages.duplicated} / ${r.messages.extraSends}`,
      '0; reset ≤ in flight',
    ],
    [
      'sends in flight at the fault (leased / at provider)',
      (r) => `${cell(r.inFlightAtFault.leasedMessages)} / ${cell(r.inFlightAtFault.openAtProvider)}`,
      '',
    ],
    ['first send after the fault ended (ms)', (r) => r.sends.firstSendAfterFaultEndMs, 'reset ≤ 10000'],
    ['longest silence of sends (ms)', (r) => r.sends.longestSendGapMs, 'reset ≤ 10000'],
    ['most sends open at the provider', (r) => r.sends.peakOpenAtProvider, ''],
    [
      'provider accepts/s (most conns waiting)',
      (r) => `${r.providerAccept.perSecond ?? 'no limit'} (${r.providerAccept.peakWaiting})`,
      '',
    ],
    [
      'api /readyz s not-200 / 200 from fault',
      (r) => `${r.readyz.api.not200Seconds} / ${r.readyz.api.ok200Seconds}`,
      '503 while stuck or disk full',
    ],
    ['  api /readyz changes (s from fault)', (r) => r.readyz.api.changes, ''],
    [
      'worker /readyz s not-200 / 200',
      (r) => `${r.readyz.worker.not200Seconds} / ${r.readyz.worker.ok200Seconds}`,
      '503 while stuck or disk full',
    ],
    ['  worker /readyz changes', (r) => r.readyz.worker.changes, ''],
    ['accepted', (r) => r.messages.accepted, ''],
    ['not sent at the end (pending/queued)', (r) => r.messages.notSent, '0'],
    [
      'failed (codes)',
      (r) => `${r.messages.failed} ${r.messages.failed ? codes(r.messages.failedCodes) : ''}`.trim(),
      '',
    ],
    ['never reached the provider', (r) => r.messages.neverReachedProvider, ''],
    [
      'recovered (probe sent) after the window',
      (r) =>
        r.recovery.ok
          ? `yes, ${round(r.recovery.afterWindowMs / 1000)} s`
          : `NO${r.recovery.restarted ? ' (restarted)' : ''}: ${r.recovery.detail}`,
      'without restart',
    ],
  ];
  const width = Math.max(...rows.map((r) => r[0].length)) + 2;
  const colW = Math.max(18, ...reports.map((r) => r.name.length + 2));
  const lines = [`${'figure'.padEnd(width)}${reports.map((r) => r.name.padEnd(colW)).join('')}target (issue #32)`];
  for (const [label, get, target] of rows) {
    const values = reports.map((r) => cell(get(r)));
    if (values.some((v) => v.length > colW - 1)) {
      // Long values (codes, changes) each on a line of their own.
      lines.push(`${label}${target ? `   [target: ${target}]` : ''}`);
      reports.forEach((r, i) => lines.push(`    ${r.name}: ${values[i]}`));
    } else lines.push(`${label.padEnd(width)}${values.map((v) => v.padEnd(colW)).join('')}${target}`);
  }
  for (const r of reports)
    for (const [proc, msgs] of Object.entries(r.logs))
      if (Object.keys(msgs).length) lines.push(`${r.name} ${proc} log (warn+): ${codes(msgs)}`);
  return lines;
}
