// The printed table, the ratios against the baselines with the issue's targets, and the JSON file.
import fs from 'node:fs';
import path from 'node:path';

import type { Backend } from './databases.js';

export type Server = 'ours' | 'single' | 'group';

export type ScenarioResult = {
  server: Server;
  backend: Backend;
  requestsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  rssMb: number | null;
  peakRssMb: number | null;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Rows in the database afterwards (warm-up included): should match the 2xx answers. */
  rows: number | null;
  serverErrorLines: number;
  /** 1-minute load average when the scenario started (others' work on the machine skews it). */
  loadAvg1m: number;
  /** The server's output, kept only when it printed anything. */
  logFile: string | null;
  warnings: string[];
};

const LABEL: Record<Server, string> = {
  ours: 'ChatGate',
  single: 'baseline single INSERT',
  group: 'baseline group commit',
};
const DB_LABEL: Record<Backend, string> = { postgres: 'PostgreSQL', pglite: 'PGlite' };

// The issue's targets: the share of the group-commit baseline's throughput we must reach.
const TARGETS: Record<Backend, { ratio: number; p99Ms: number | null }> = {
  postgres: { ratio: 0.5, p99Ms: 20 },
  pglite: { ratio: 0.4, p99Ms: null },
};

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);
const fmt = (n: number | null, digits = 0) => (n === null ? 'n/a' : n.toFixed(digits));

export type Verdict = {
  backend: Backend;
  vsSingle: number | null;
  vsGroup: number | null;
  targetRatio: number;
  targetP99Ms: number | null;
  pass: boolean | null;
};

export function verdicts(results: ScenarioResult[], connections: number): Verdict[] {
  const out: Verdict[] = [];
  for (const backend of ['postgres', 'pglite'] as const) {
    const get = (s: Server) => results.find((r) => r.server === s && r.backend === backend);
    const ours = get('ours');
    if (!ours) continue;
    const ratio = (b: ScenarioResult | undefined) =>
      b && b.requestsPerSec > 0 ? ours.requestsPerSec / b.requestsPerSec : null;
    const t = TARGETS[backend];
    const vsGroup = ratio(get('group'));
    const valid = ours.warnings.length === 0 && connections === 100;
    const pass =
      !valid || vsGroup === null ? null : vsGroup >= t.ratio && (t.p99Ms === null || ours.latencyMs.p99 <= t.p99Ms);
    out.push({ backend, vsSingle: ratio(get('single')), vsGroup, targetRatio: t.ratio, targetP99Ms: t.p99Ms, pass });
  }
  return out;
}

export function printReport(results: ScenarioResult[], connections: number): Verdict[] {
  const cols = [36, 11, 10, 9, 9, 9, 8, 8, 9];
  const row = (cells: string[]) => cells.map((c, i) => (i === 0 ? pad(c, cols[i]!) : lpad(c, cols[i]!))).join(' ');
  console.log('\n' + row(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'RSS MB', 'peak MB', 'non-2xx', 'errors', 'rows']));
  for (const r of results) {
    console.log(
      row([
        `${LABEL[r.server]} / ${DB_LABEL[r.backend]}`,
        fmt(r.requestsPerSec),
        fmt(r.latencyMs.p50, 1),
        fmt(r.latencyMs.p99, 1),
        fmt(r.rssMb, 1),
        fmt(r.peakRssMb, 1),
        String(r.non2xx),
        String(r.errors + r.timeouts),
        String(r.rows ?? 'n/a'),
      ]),
    );
  }
  console.log("(RSS is the server process only; on PostgreSQL the database server's memory is not included.)");

  const list = verdicts(results, connections);
  console.log();
  for (const v of list) {
    const ours = results.find((r) => r.server === 'ours' && r.backend === v.backend)!;
    const target = `target ≥ ${v.targetRatio} × group${v.targetP99Ms === null ? '' : ` and p99 ≤ ${v.targetP99Ms} ms (ours: ${fmt(ours.latencyMs.p99, 1)} ms)`}`;
    const verdict =
      v.pass === null
        ? connections === 100
          ? 'NOT VALID (see warnings)'
          : 'n/a: targets are set at 100 connections'
        : v.pass
          ? 'PASS'
          : 'FAIL';
    console.log(
      `${DB_LABEL[v.backend]}: ours/single = ${fmt(v.vsSingle, 2)}, ours/group = ${fmt(v.vsGroup, 2)}; ${target}: ${verdict}`,
    );
  }
  for (const r of results)
    for (const w of r.warnings) console.log(`WARNING ${LABEL[r.server]} / ${DB_LABEL[r.backend]}: ${w}`);
  return list;
}

export function writeJson(dir: string, stamp: string, data: unknown): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${stamp}.json`);
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

/** The most events (epoch ms) in any one-second window. */
export function maxPerSecond(times: number[]): number {
  const t = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= 1000) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}
