// npm run bench:faults — issue #32's fault drill, run from outside against the built service as
// the README starts it (bench/fault-drill-stacks.ts): on PostgreSQL, `serve --role api` and
// `serve --role worker` reaching a fresh database through a fault-injection TCP proxy; on the
// embedded database, `serve` with DATA_DIR on a small tmpfs; `chatgate emulator` as the provider
// behind an accept gate (bench/accept-gate.ts); customers made through the operator API. A steady
// open-loop load of POST /messages (bench/fault-drill-load.ts) runs while these scenarios run one
// after another, each with a lead of normal load, the fault, a watch window, then a recovery
// check (a probe message accepted and sent; if none within the recovery time, the processes are
// restarted so that the next scenario starts healthy, and the table says so):
//   reset   every PostgreSQL connection gets an RST once (a failover);
//   stall   no byte either way to PostgreSQL for 20 s, then normal (a partition);
//   slow    the provider answers each send after 10 s, for 60 s (the emulator's latency);
//   disk    the embedded database's filesystem written full for 20 s, then freed (as root: the
//           drill re-runs itself under `unshare --mount`; skipped with a note otherwise).
// During stall and slow the provider also accepts new connections slowly (20 a second), as a
// loaded provider or machine does: the hazard behind the duplicates (--slow-accept none: off).
// Figures per scenario (bench/fault-drill-report.ts): requests by answer, longest and p99, not
// answered within 15 s / 30 s, 5xx and their codes, 5xx from 10 s after the fault, duplicate
// sends (GET /__emulator/send-counts), sends in flight when the fault began, the first send after
// it and the longest silence of sends, /readyz of each process every 500 ms, messages not sent at
// the end, warn+ log lines. Printed as a table; JSON in bench/results/<time>-fault-drill.json.
//
// Flags (or FAULT_DRILL_* environment): --scale 1 (multiplies the faults' and windows' lengths;
// 0.35: a smoke run of about 3 minutes), --rate 100 (requests/s), --concurrency 1000 (open
// requests at most; more are counted as not offered), --scenarios reset,stall,slow,disk,
// --provider-delay-ms 10000, --slow-accept stall,slow, --provider-accepts-per-sec 20,
// --account-mps 1000 (each account's and provider number's throughput), --tmpfs-mb 96,
// --database-url (default postgres://postgres@127.0.0.1:5432/postgres), --out FILE.
// Needs the build (npm run build): the service runs from dist/ as in production.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { postgresReachable } from './databases.js';
import { startLoad } from './fault-drill-load.js';
import {
  printTable,
  readyFigures,
  type ReadySample,
  requestFigures,
  type ScenarioReport,
  sendFigures,
  type Timeline,
} from './fault-drill-report.js';
import {
  cli,
  type Emulator,
  logCounts,
  pollReady,
  type Stack,
  startEmbeddedStack,
  startEmulator,
  startPostgresStack,
} from './fault-drill-stacks.js';
import { json } from './live-stack.js';
import { stopAll } from './processes.js';
import { writeJson } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const SCENARIOS = ['reset', 'stall', 'slow', 'disk'] as const;
type ScenarioName = (typeof SCENARIOS)[number];

const { values: flags } = parseArgs({
  options: Object.fromEntries(
    [
      'scale',
      'rate',
      'concurrency',
      'scenarios',
      'provider-delay-ms',
      'account-mps',
      'slow-accept',
      'provider-accepts-per-sec',
      'tmpfs-mb',
      'database-url',
      'out',
    ].map((name) => [name, { type: 'string' as const }]),
  ),
});
const envName = (flag: string) => `FAULT_DRILL_${flag.toUpperCase().replace(/-/g, '_')}`;
const text = (flag: string, def: string) => (flags[flag] as string | undefined) ?? process.env[envName(flag)] ?? def;
const num = (flag: string, def: number) => {
  const v = Number(text(flag, String(def)));
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${flag} (${envName(flag)}) must be a positive number`);
  return v;
};
const names = (flag: string, def: string) =>
  text(flag, def)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'none');
const settings = {
  scale: num('scale', 1),
  ratePerSec: num('rate', 100),
  concurrency: num('concurrency', 1000),
  clientTimeoutMs: 40_000,
  scenarios: names('scenarios', SCENARIOS.join(',')) as ScenarioName[],
  providerDelayMs: num('provider-delay-ms', 10_000),
  providerLatencyMs: 100,
  /** Scenarios during whose fault and watch the provider accepts new connections slowly. */
  slowAccept: names('slow-accept', 'stall,slow'),
  providerAcceptsPerSec: num('provider-accepts-per-sec', 20),
  accountMps: num('account-mps', 1000),
  tmpfsMb: num('tmpfs-mb', 96),
  databaseUrl: text('database-url', 'postgres://postgres@127.0.0.1:5432/postgres'),
  out: (flags.out as string | undefined) ?? null,
};
for (const s of settings.scenarios)
  if (!SCENARIOS.includes(s)) throw new Error(`--scenarios: "${s}"? (${SCENARIOS.join(', ')})`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const scaled = (ms: number, min: number) => Math.max(min, Math.round(ms * settings.scale));
const LEAD_MS = 5000;
/** Lengths of each scenario's fault and of the watch after it (scaled). */
const PLAN: Record<ScenarioName, { faultMs: number; afterMs: number }> = {
  reset: { faultMs: 0, afterMs: scaled(45_000, 20_000) },
  stall: { faultMs: scaled(20_000, 5000), afterMs: scaled(40_000, 20_000) },
  slow: { faultMs: scaled(60_000, 15_000), afterMs: scaled(30_000, 20_000) },
  disk: { faultMs: scaled(20_000, 10_000), afterMs: scaled(30_000, 20_000) },
};
const RECOVERY_MS = scaled(60_000, 30_000);
/** A pro customer's monthly quota is 20,000 messages: the load takes one customer per 15,000. */
const PER_CUSTOMER = 15_000;
const loadAt = () => os.loadavg().map((n) => Math.round(n * 10) / 10);

/** One call of the recovery probe, with a 5 s deadline; throws with what failed. */
async function probeCall(stack: Stack, url: string, init: RequestInit = {}) {
  try {
    const res = await fetch(url, {
      ...init,
      headers: { 'content-type': 'application/json', 'x-api-key': stack.keys[0]! },
      signal: AbortSignal.timeout(5000),
    });
    return { status: res.status, body: (await res.json()) as { messageId?: string; status?: string } };
  } catch (err) {
    throw new Error(
      `probe: ${(err as Error).name === 'TimeoutError' ? 'no answer within 5 s' : (err as Error).message}`,
    );
  }
}

type Recovery = ScenarioReport['recovery'];

/**
 * Recovered: a probe message accepted and then sent, within RECOVERY_MS of `from`; past that only
 * while the provider keeps receiving sends (a backlog ahead of the probe, not a stuck worker), at
 * most 3 × RECOVERY_MS.
 */
async function recover(stack: Stack, emu: Emulator, from: number, tag: string): Promise<Recovery> {
  let id: string | null = null;
  let detail = '';
  while (Date.now() < from + 3 * RECOVERY_MS) {
    try {
      if (id === null) {
        const accepted = await probeCall(stack, `${stack.apiUrl}/messages`, {
          method: 'POST',
          body: JSON.stringify({
            externalId: `probe-${stamp}-${tag}`,
            to: { type: 'phone', phoneE164: '+15551234567' },
            content: { type: 'text', text: 'probe' },
          }),
        });
        // 200: a replay of this probe's externalId (an earlier try that timed out was accepted after all).
        if (![200, 201].includes(accepted.status) || !accepted.body.messageId)
          throw new Error(`probe answered ${accepted.status}`);
        id = accepted.body.messageId;
      }
      const seen = await probeCall(stack, `${stack.apiUrl}/messages/${id}`);
      if (['sent', 'delivered', 'read'].includes(seen.body.status ?? ''))
        return { ok: true, afterWindowMs: Date.now() - from, restarted: false, detail: '' };
      detail = 'probe accepted, not sent';
    } catch (err) {
      detail = (err as Error).message;
    }
    if (Date.now() > from + RECOVERY_MS) {
      const c = await json(`${emu.url}/__emulator/send-counts?since=${Date.now() - 5000}`).catch(() => null);
      const recent = (c?.arrivals as number[] | undefined)?.length ?? 0;
      if (id === null || recent === 0) break;
    }
    await sleep(500);
  }
  return { ok: false, afterWindowMs: Date.now() - from, restarted: false, detail };
}

/** Begins a scenario's fault; answers the function that ends it. */
async function beginFault(name: ScenarioName, stack: Stack, emu: Emulator): Promise<() => Promise<void>> {
  const latency = (ms: number) =>
    json(`${emu.url}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ latencyMs: ms }) });
  switch (name) {
    case 'reset':
      stack.proxy!.resetAll();
      return async () => {};
    case 'stall':
      stack.proxy!.setMode({ kind: 'stall' });
      return async () => stack.proxy!.setMode({ kind: 'pass' });
    case 'slow':
      await latency(settings.providerDelayMs);
      return async () => void (await latency(settings.providerLatencyMs));
    case 'disk':
      stack.disk!.fill();
      return async () => stack.disk!.free();
  }
}

/** Runs `scenarios` on `stack` under one steady load; answers a report per scenario. */
async function runPhase(stack: Stack, scenarios: ScenarioName[], emu: Emulator): Promise<ScenarioReport[]> {
  console.log(`  ${stack.label}`);
  const first = await recover(stack, emu, Date.now(), 'start');
  if (!first.ok) throw new Error(`${stack.label}: not sending before any fault (${first.detail})`);
  const ready = { api: [] as ReadySample[], worker: [] as ReadySample[] };
  const stopPolls = [pollReady(stack.readyUrls.api, ready.api), pollReady(stack.readyUrls.worker, ready.worker)];
  const providerOpen: { t: number; peak: number }[] = [];
  let polling = true;
  const later = () => `since=${Date.now() + 3_600_000}`; // counts without arrivals
  const providerPoll = (async () => {
    while (polling) {
      const c = await json(`${emu.url}/__emulator/send-counts?${later()}`).catch(() => null);
      if (c) providerOpen.push({ t: Date.now(), peak: c.peakOpen as number });
      await sleep(1000);
    }
  })();
  const load = startLoad({
    url: stack.apiUrl,
    keys: stack.keys,
    ratePerSec: settings.ratePerSec,
    concurrency: settings.concurrency,
    timeoutMs: settings.clientTimeoutMs,
    prefix: `drill-${stamp}-${scenarios[0]}`,
  });
  const phaseStart = Date.now();
  await sleep(LEAD_MS);

  const partial: Pick<
    ScenarioReport,
    'name' | 'timeline' | 'inFlightAtFault' | 'recovery' | 'loadAvg' | 'providerAccept'
  >[] = [];
  for (const name of scenarios) {
    const plan = PLAN[name];
    const loadAvg = loadAt();
    process.stdout.write(`    ${name} (load ${loadAvg.join(' ')}) ... `);
    const windowStart = Date.now();
    await sleep(LEAD_MS);
    const inFlightAtFault = {
      leasedMessages: await stack.leased().catch(() => null),
      openAtProvider: (await json(`${emu.url}/__emulator/send-counts?${later()}`)).open as number,
    };
    const slowAccept = settings.slowAccept.includes(name);
    emu.gate.counts(); // its peak starts again
    const faultStart = Date.now();
    if (slowAccept) emu.gate.setRate(settings.providerAcceptsPerSec);
    const endFault = await beginFault(name, stack, emu);
    await sleep(plan.faultMs);
    await endFault();
    const faultEnd = Date.now();
    await sleep(plan.afterMs);
    const windowEnd = Date.now();
    emu.gate.setRate(null);
    const gatePeak = emu.gate.counts().peakWaiting;
    // Recovery: a probe accepted and sent; if not, restart the processes for the next scenario.
    const recovery = await recover(stack, emu, windowEnd, `${name}`);
    if (!recovery.ok) {
      recovery.restarted = true;
      await stack.restart();
    }
    partial.push({
      name,
      timeline: { name, windowStart, faultStart, faultEnd, windowEnd },
      inFlightAtFault,
      recovery,
      loadAvg,
      providerAccept: { perSecond: slowAccept ? settings.providerAcceptsPerSec : null, peakWaiting: gatePeak },
    });
    console.log(
      `${Math.round((Date.now() - windowStart) / 1000)} s${recovery.ok ? '' : ' (NOT RECOVERED: restarted)'}`,
    );
  }

  // The end: stop offering, let open requests end, let the worker send what it accepted (until
  // the provider has received nothing new for 5 s, at most RECOVERY_MS).
  await load.stop();
  let received = -1;
  for (const deadline = Date.now() + RECOVERY_MS; Date.now() < deadline; await sleep(5000)) {
    const now = (await json(`${emu.url}/__emulator/send-counts?${later()}`)).received as number;
    if (now === received) break;
    received = now;
  }
  polling = false;
  await providerPoll;
  for (const s of stopPolls) await s();

  const counts = await json(`${emu.url}/__emulator/send-counts?since=${phaseStart}`);
  const sentIds = new Set(
    ((await json(`${emu.url}/__emulator/sent`)).sent as { messageId: string | null }[]).map((s) => s.messageId),
  );
  const times = new Map<string, number>(
    (counts.duplicated as { messageId: string; count: number }[]).map((d) => [d.messageId, d.count]),
  );
  const idsOf = (tl: Timeline) =>
    load.records
      .filter((r) => r.start >= tl.windowStart && r.start < tl.windowEnd)
      .flatMap((r) => (r.outcome?.kind === 'answered' && r.outcome.id ? [r.outcome.id] : []));
  const reports: ScenarioReport[] = [];
  const statesBy = new Map<string, Awaited<ReturnType<Stack['states']>>>();
  for (const p of partial) statesBy.set(p.name, await stack.states(idsOf(p.timeline)));
  for (const p of partial) {
    const tl = p.timeline;
    const ids = idsOf(tl);
    const states = statesBy.get(p.name)!;
    const failedCodes: Record<string, number> = {};
    for (const s of states.filter((s) => s.status === 'failed')) failedCodes[s.code ?? '?'] = s.n;
    const logs: Record<string, Record<string, number>> = {};
    for (const c of stack.processes) {
      const found = logCounts(c, tl.windowStart, tl.windowEnd + p.recovery.afterWindowMs);
      if (Object.keys(found).length) logs[`${c.name} ${c.pid}`] = found;
    }
    const peaks = providerOpen.filter((o) => o.t >= tl.windowStart && o.t < tl.windowEnd).map((o) => o.peak);
    reports.push({
      ...p,
      requests: requestFigures(load.records, tl, settings.clientTimeoutMs),
      notOffered: load.notOffered.filter((t) => t >= tl.windowStart && t < tl.windowEnd).length,
      readyz: { api: readyFigures(ready.api, tl), worker: readyFigures(ready.worker, tl) },
      sends: {
        ...sendFigures(counts.arrivals as number[], tl, tl.windowEnd),
        peakOpenAtProvider: peaks.length ? Math.max(...peaks) : null,
      },
      messages: {
        accepted: ids.length,
        duplicated: ids.filter((id) => times.has(id)).length,
        extraSends: ids.reduce((n, id) => n + (times.get(id) ?? 1) - 1, 0),
        notSent: states.filter((s) => s.status === 'pending' || s.status === 'queued').reduce((n, s) => n + s.n, 0),
        failed: states.filter((s) => s.status === 'failed').reduce((n, s) => n + s.n, 0),
        failedCodes,
        neverReachedProvider: ids.filter((id) => !sentIds.has(id)).length,
      },
      logs,
    });
  }
  return reports;
}

/** The disk scenario needs root in a private mount namespace: re-run this drill inside one. */
function reRunInMountNamespace(): boolean {
  if (process.env.FAULT_DRILL_IN_MOUNT_NS === '1' || !settings.scenarios.includes('disk')) return false;
  if (process.getuid?.() !== 0 || spawnSync('unshare', ['--version']).status !== 0) {
    console.log('disk scenario skipped: it needs root and unshare (a tmpfs in a private mount namespace)');
    settings.scenarios = settings.scenarios.filter((s) => s !== 'disk');
    return false;
  }
  const args = ['--mount', '--propagation', 'private', process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  const run = spawnSync('unshare', args, { stdio: 'inherit', env: { ...process.env, FAULT_DRILL_IN_MOUNT_NS: '1' } });
  process.exit(run.status ?? 1);
}

async function main() {
  if (reRunInMountNamespace()) return;
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: npm run build first`);
  const onPostgres = settings.scenarios.filter((s) => s !== 'disk');
  if (onPostgres.length && !(await postgresReachable(settings.databaseUrl)))
    throw new Error(`PostgreSQL is not reachable at ${settings.databaseUrl}`);
  const startedAt = new Date().toISOString();
  console.log(
    `Fault drill (issue #32): scale ${settings.scale}, ${settings.ratePerSec} req/s, at most ${settings.concurrency} open, scenarios ${settings.scenarios.join(', ')}; ${os.cpus().length} CPUs, load average ${loadAt().join(' ')}`,
  );
  const customersFor = (scenarios: ScenarioName[]) => {
    const ms = scenarios.reduce(
      (t, s) => t + LEAD_MS + PLAN[s].faultMs + PLAN[s].afterMs + RECOVERY_MS,
      2 * RECOVERY_MS,
    );
    return Math.ceil(((ms / 1000) * settings.ratePerSec) / PER_CUSTOMER) + 1;
  };
  const stacks: Stack[] = [];
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      void Promise.all(stacks.map((s) => s.close().catch(() => {})))
        .then(() => stopAll())
        .finally(() => process.exit(130));
    });

  const emu = await startEmulator(settings.providerLatencyMs);
  const reports: ScenarioReport[] = [];
  const phases: { stack: string; scenarios: string[] }[] = [];
  try {
    const common = { emu, accountMps: settings.accountMps };
    if (onPostgres.length) {
      const stack = await startPostgresStack({
        ...common,
        adminUrl: settings.databaseUrl,
        customers: customersFor(onPostgres),
      });
      stacks.push(stack);
      reports.push(...(await runPhase(stack, onPostgres, emu)));
      phases.push({ stack: stack.label, scenarios: onPostgres });
      await stacks.pop()!.close();
    }
    if (settings.scenarios.includes('disk')) {
      const stack = await startEmbeddedStack({
        ...common,
        customers: customersFor(['disk']),
        sizeMb: settings.tmpfsMb,
      });
      stacks.push(stack);
      reports.push(...(await runPhase(stack, ['disk'], emu)));
      phases.push({ stack: stack.label, scenarios: ['disk'] });
      await stacks.pop()!.close();
    }
  } finally {
    for (const s of stacks) await s.close().catch(() => {});
    await emu.gate.close();
    await stopAll();
  }

  const lines = printTable(reports);
  console.log('');
  for (const l of lines) console.log(l);
  const data = {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings,
    phases,
    machine: { cpus: os.cpus().length, node: process.version, loadAvgAtEnd: os.loadavg() },
    reports,
    table: lines,
  };
  let file: string;
  if (settings.out) {
    file = settings.out;
    fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  } else file = writeJson(path.join(here, 'results'), `${stamp}-fault-drill`, data);
  console.log(`\nResults: ${path.relative(process.cwd(), file)}`);
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
