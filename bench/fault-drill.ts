// npm run bench:faults — issue #32's fault drill, run from outside against the built service as
// the README starts it: a fresh PostgreSQL database, `chatgate serve --role api` and
// `chatgate serve --role worker` (its /readyz on WORKER_STATUS_PORT), both reaching PostgreSQL
// through a fault-injection TCP proxy (test/support/fault-proxy.ts), `chatgate emulator` as the
// provider, customers made through the operator API. A steady open-loop load of POST /messages
// runs throughout (bench/fault-drill-load.ts) while these scenarios run one after another, each
// with a lead of normal load, the fault, a watch window, then a recovery check (one probe
// message accepted and sent; if none within the recovery time, both processes are restarted so
// the next scenario starts healthy, and that is reported):
//   reset   every connection through the proxy gets an RST once (a failover);
//   stall   no byte either way through the proxy for 20 s, then normal (a partition);
//   slow    the provider answers each send after 10 s, for 60 s (the emulator's latency).
// Figures per scenario (bench/fault-drill-report.ts): requests by answer, longest and p99, not
// answered within 15 s / 30 s, 5xx and their codes, 5xx from 10 s after the fault, duplicate
// sends (the emulator's GET /__emulator/send-counts), sends in flight when the fault began, the
// first send after it and the longest silence of sends, /readyz of both processes every 500 ms,
// messages not sent at the end. Printed as a table and written to bench/results/*-fault-drill.json.
//
// Flags (or environment): --scale 0.35 (FAULT_DRILL_SCALE: multiplies the faults' and windows'
// lengths; about 2 minutes of drill at 0.35), --rate 100 (FAULT_DRILL_RATE, requests/s),
// --concurrency 1000 (open requests at most), --scenarios reset,stall,slow, --provider-delay-ms
// 10000, --account-mps 1000 (each account's and provider number's throughput), --database-url
// (FAULT_DRILL_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres), --out FILE.
// Needs the build (npm run build): the service runs from dist/ as in production.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import postgres from 'postgres';

import { type FaultProxy, startFaultProxy } from '../test/support/fault-proxy.js';
import { createDatabase, postgresReachable } from './databases.js';
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
import { ADMIN_TOKEN, benchAccount, ENCRYPTION_KEY, json } from './live-stack.js';
import { type Child, freePort, startNode, stop, stopAll, waitHealthy } from './processes.js';
import { writeJson } from './report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cli = path.join(root, 'dist', 'src', 'cli.js');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

const { values: flags } = parseArgs({
  options: {
    scale: { type: 'string' },
    rate: { type: 'string' },
    concurrency: { type: 'string' },
    scenarios: { type: 'string' },
    'provider-delay-ms': { type: 'string' },
    'account-mps': { type: 'string' },
    'database-url': { type: 'string' },
    out: { type: 'string' },
  },
});
const num = (flag: string | undefined, env: string, def: number) => {
  const v = Number(flag ?? process.env[env] ?? def);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${env} / its flag must be a positive number`);
  return v;
};
const settings = {
  scale: num(flags.scale, 'FAULT_DRILL_SCALE', 1),
  ratePerSec: num(flags.rate, 'FAULT_DRILL_RATE', 100),
  concurrency: num(flags.concurrency, 'FAULT_DRILL_CONCURRENCY', 1000),
  clientTimeoutMs: 40_000,
  scenarios: (flags.scenarios ?? process.env.FAULT_DRILL_SCENARIOS ?? 'reset,stall,slow')
    .split(',')
    .map((s) => s.trim()),
  providerDelayMs: num(flags['provider-delay-ms'], 'FAULT_DRILL_PROVIDER_DELAY_MS', 10_000),
  providerLatencyMs: 100,
  accountMps: num(flags['account-mps'], 'FAULT_DRILL_ACCOUNT_MPS', 1000),
  databaseUrl:
    flags['database-url'] ?? process.env.FAULT_DRILL_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  out: flags.out ?? null,
};
for (const s of settings.scenarios)
  if (!['reset', 'stall', 'slow'].includes(s)) throw new Error(`--scenarios: "${s}"? (reset, stall, slow)`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const scaled = (ms: number, min: number) => Math.max(min, Math.round(ms * settings.scale));
const LEAD_MS = 5000;
/** Lengths of each scenario's fault and of the watch after it (scaled). */
const PLAN = {
  reset: { faultMs: 0, afterMs: scaled(45_000, 20_000) },
  stall: { faultMs: scaled(20_000, 5000), afterMs: scaled(40_000, 20_000) },
  slow: { faultMs: scaled(60_000, 15_000), afterMs: scaled(30_000, 20_000) },
} as const;
type ScenarioName = keyof typeof PLAN;
const RECOVERY_MS = scaled(60_000, 30_000);
/** A pro customer's monthly quota is 20,000 messages: the load takes one customer per 15,000. */
const PER_CUSTOMER = 15_000;

/** Polls `url` every 500 ms (2 s timeout: a probe that hangs is not ready). */
function pollReady(url: string, samples: ReadySample[]) {
  let running = true;
  const done = (async () => {
    while (running) {
      const t = Date.now();
      let status: ReadySample['status'];
      try {
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        status = res.status;
      } catch (err) {
        status = (err as Error).name === 'TimeoutError' ? 'timeout' : 'error';
      }
      samples.push({ t, status });
      await sleep(Math.max(0, t + 500 - Date.now()));
    }
  })();
  return async () => {
    running = false;
    await done;
  };
}

/** warn and error lines of a process's log (pino JSON) in [from, to), counted by message. */
function logCounts(child: Child, from: number, to: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of child.output.join('').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const l = JSON.parse(line) as { time?: number; level?: number; msg?: string; err?: { code?: string } };
      if ((l.time ?? 0) < from || (l.time ?? 0) >= to || (l.level ?? 0) < 40) continue;
      const key = `${l.msg ?? '?'}${l.err?.code ? ` (${l.err.code})` : ''}`;
      counts[key] = (counts[key] ?? 0) + 1;
    } catch {
      /* a partial line */
    }
  }
  return Object.fromEntries(
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6),
  );
}

async function startService(env: Record<string, string>, proxy: FaultProxy, dbUrl: string) {
  const apiPort = await freePort();
  const workerPort = await freePort();
  const common = { ...env, DATABASE_URL: proxy.via(dbUrl) };
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const procs = { api: null as Child | null, worker: null as Child | null };
  const start = async () => {
    procs.api = startNode('api', [cli, 'serve', '--role', 'api'], { ...common, PORT: String(apiPort) }, root);
    await waitHealthy(procs.api, apiUrl); // first: it runs the migrations
    procs.worker = startNode(
      'worker',
      [cli, 'serve', '--role', 'worker'],
      { ...common, WORKER_STATUS_PORT: String(workerPort) },
      root,
    );
    await waitHealthy(procs.worker, workerUrl);
  };
  await start();
  const all: Child[] = [procs.api!, procs.worker!];
  return {
    apiUrl,
    workerUrl,
    procs,
    /** Every process started, restarts included (for their logs). */
    all,
    async restart() {
      await Promise.all([stop(procs.worker!, 5000), stop(procs.api!, 5000)]);
      await start();
      all.push(procs.api!, procs.worker!);
    },
  };
}

async function main() {
  if (!fs.existsSync(cli)) throw new Error(`${cli} is missing: npm run build first`);
  if (!(await postgresReachable(settings.databaseUrl)))
    throw new Error(`PostgreSQL is not reachable at ${settings.databaseUrl}`);
  const startedAt = new Date().toISOString();
  const loadAt = () => os.loadavg().map((n) => Math.round(n * 10) / 10);
  console.log(
    `Fault drill (issue #32): scale ${settings.scale}, ${settings.ratePerSec} req/s, at most ${settings.concurrency} open, scenarios ${settings.scenarios.join(', ')}; ${os.cpus().length} CPUs, load average ${loadAt().join(' ')}`,
  );

  const db = await createDatabase('postgres', settings.databaseUrl);
  const dbUrl = db.env.DATABASE_URL!;
  const direct = postgres(dbUrl, { max: 2, onnotice: () => {} });
  const target = new URL(dbUrl);
  const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const cleanup = async () => {
    await stopAll();
    await proxy.close().catch(() => {});
    await direct.end({ timeout: 1 }).catch(() => {});
    await db.drop().catch(() => {});
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void cleanup().finally(() => process.exit(130)));

  try {
    // The provider.
    const emuPort = await freePort();
    const emuUrl = `http://127.0.0.1:${emuPort}`;
    const emu = startNode(
      'emulator',
      [cli, 'emulator'],
      { EMULATOR_PORT: String(emuPort), EMULATOR_LATENCY_MS: String(settings.providerLatencyMs), LOG_LEVEL: 'warn' },
      root,
    );
    for (let i = 0; ; i++) {
      if ((await fetch(`${emuUrl}/__emulator/stats`).catch(() => null))?.ok) break;
      if (i > 300 || emu.proc.exitCode !== null) throw new Error(`emulator did not start:\n${emu.output.join('')}`);
      await sleep(100);
    }
    await json(`${emuUrl}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ enabled: false }) }); // no receipts

    // The service, as the README starts it (one api, one worker), on PostgreSQL through the proxy.
    const service = await startService(
      { ADMIN_TOKEN, ENCRYPTION_KEY, PROVIDER_BASE_URL: emuUrl, LOG_LEVEL: 'warn', HOST: '127.0.0.1' },
      proxy,
      dbUrl,
    );
    const planned = settings.scenarios.reduce(
      (ms, s) => ms + LEAD_MS + PLAN[s as ScenarioName].faultMs + PLAN[s as ScenarioName].afterMs + RECOVERY_MS,
      10_000,
    );
    const customers = Math.ceil((planned / 1000) * (settings.ratePerSec / PER_CUSTOMER)) + 1;
    const keys: string[] = [];
    for (let c = 0; c < customers; c++)
      keys.push((await benchAccount(service.apiUrl, emuUrl, settings.accountMps)).key);

    const probe = async (i: number) => {
      const res = await fetch(`${service.apiUrl}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys[0]! },
        body: JSON.stringify({
          externalId: `probe-${stamp}-${i}`,
          to: { type: 'phone', phoneE164: '+15551234567' },
          content: { type: 'text', text: 'probe' },
        }),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as { messageId?: string };
      if (res.status !== 201 || !body.messageId) throw new Error(`probe answered ${res.status}`);
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(200)) {
        const [row] = await direct<{ status: string }[]>`SELECT status FROM messages WHERE id = ${body.messageId}`;
        if (row && ['sent', 'delivered', 'read'].includes(row.status)) return;
      }
      throw new Error('probe accepted but not sent within 10 s');
    };
    await probe(0);

    // Recording for the whole run.
    const ready = { api: [] as ReadySample[], worker: [] as ReadySample[] };
    const stopPolls = [pollReady(service.apiUrl, ready.api), pollReady(service.workerUrl, ready.worker)];
    const providerOpen: { t: number; peak: number }[] = [];
    let polling = true;
    const providerPoll = (async () => {
      while (polling) {
        const c = await json(`${emuUrl}/__emulator/send-counts?since=${Date.now() + 3_600_000}`).catch(() => null);
        if (c) providerOpen.push({ t: Date.now(), peak: c.peakOpen as number });
        await sleep(1000);
      }
    })();
    const load = startLoad({
      url: service.apiUrl,
      keys,
      ratePerSec: settings.ratePerSec,
      concurrency: settings.concurrency,
      timeoutMs: settings.clientTimeoutMs,
      prefix: `drill-${stamp}`,
    });
    const runStart = Date.now();
    await sleep(LEAD_MS);

    const partial: Omit<ScenarioReport, 'requests' | 'readyz' | 'sends' | 'messages' | 'logs' | 'notOffered'>[] = [];
    let probes = 1;
    for (const name of settings.scenarios as ScenarioName[]) {
      const plan = PLAN[name];
      const loadAvg = loadAt();
      process.stdout.write(`  ${name} (load ${loadAvg.join(' ')}) ... `);
      const windowStart = Date.now();
      await sleep(LEAD_MS);
      const inFlight = async () => ({
        leasedMessages: Number(
          (
            await direct<{ n: number }[]>`SELECT count(*)::int AS n FROM messages
              WHERE status IN ('pending', 'queued') AND locked_until > now()`
          )[0]!.n,
        ),
        openAtProvider: (await json(`${emuUrl}/__emulator/send-counts?since=${Date.now() + 3_600_000}`)).open as number,
      });
      const inFlightAtFault = await inFlight();
      const faultStart = Date.now();
      if (name === 'reset') proxy.resetAll();
      if (name === 'stall') proxy.setMode({ kind: 'stall' });
      if (name === 'slow')
        await json(`${emuUrl}/__emulator/settings`, {
          method: 'PUT',
          body: JSON.stringify({ latencyMs: settings.providerDelayMs }),
        });
      await sleep(plan.faultMs);
      if (name === 'stall') proxy.setMode({ kind: 'pass' });
      if (name === 'slow')
        await json(`${emuUrl}/__emulator/settings`, {
          method: 'PUT',
          body: JSON.stringify({ latencyMs: settings.providerLatencyMs }),
        });
      const faultEnd = Date.now();
      await sleep(plan.afterMs);
      const windowEnd = Date.now();
      // Recovery: a probe accepted and sent, tried until RECOVERY_MS; else restart both processes.
      let recovery = { ok: false, afterWindowMs: 0, restarted: false, detail: '' };
      for (const deadline = windowEnd + RECOVERY_MS; Date.now() < deadline;) {
        try {
          await probe(probes++);
          recovery = { ok: true, afterWindowMs: Date.now() - windowEnd, restarted: false, detail: '' };
          break;
        } catch (err) {
          recovery.detail = (err as Error).message;
          await sleep(1000);
        }
      }
      if (!recovery.ok) {
        recovery = { ...recovery, afterWindowMs: Date.now() - windowEnd, restarted: true };
        await service.restart();
      }
      const timeline: Timeline = { name, windowStart, faultStart, faultEnd, windowEnd };
      partial.push({ name, timeline, inFlightAtFault, recovery, loadAvg });
      console.log(
        `${Math.round((Date.now() - windowStart) / 1000)} s${recovery.ok ? '' : ' (NOT RECOVERED: restarted)'}`,
      );
    }

    // The end: stop offering, let open requests end, give the worker time to send what it accepted.
    await load.stop();
    const drainStart = Date.now();
    for (; Date.now() - drainStart < RECOVERY_MS; await sleep(1000)) {
      const [row] = await direct<{ n: number }[]>`SELECT count(*)::int AS n FROM messages
        WHERE status IN ('pending', 'queued') AND due_at <= now() + interval '5 seconds'`;
      if (row!.n === 0) break;
    }
    polling = false;
    await providerPoll;
    for (const s of stopPolls) await s();

    const counts = await json(`${emuUrl}/__emulator/send-counts?since=${runStart}`);
    const sentIds = new Set(
      ((await json(`${emuUrl}/__emulator/sent`)).sent as { messageId: string | null }[]).map((s) => s.messageId),
    );
    const times = new Map<string, number>(
      (counts.duplicated as { messageId: string; times: number }[]).map((d) => [d.messageId, d.times]),
    );
    const reports: ScenarioReport[] = [];
    for (const p of partial) {
      const tl = p.timeline;
      const mine = load.records.filter((r) => r.start >= tl.windowStart && r.start < tl.windowEnd);
      const ids = mine.flatMap((r) => (r.outcome?.kind === 'answered' && r.outcome.id ? [r.outcome.id] : []));
      const states = await direct<{ status: string; code: string | null; n: number }[]>`
        SELECT status, error->>'code' AS code, count(*)::int AS n FROM messages
         WHERE id = ANY(${ids}::uuid[]) GROUP BY 1, 2`;
      const failedCodes: Record<string, number> = {};
      for (const s of states.filter((s) => s.status === 'failed')) failedCodes[s.code ?? '?'] = s.n;
      const logs: Record<string, Record<string, number>> = {};
      for (const c of service.all) {
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
    const lines = printTable(reports);
    console.log('');
    for (const l of lines) console.log(l);
    const data = {
      startedAt,
      finishedAt: new Date().toISOString(),
      settings,
      machine: { cpus: os.cpus().length, node: process.version, loadAvgAtEnd: os.loadavg() },
      totals: { duplicatedMessages: times.size, emulatorReceived: counts.received },
      reports,
      table: lines,
    };
    let file: string;
    if (settings.out) {
      file = settings.out;
      fs.writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
    } else file = writeJson(path.join(here, 'results'), `${stamp}-fault-drill`, data);
    console.log(`\nResults: ${path.relative(process.cwd(), file)}`);
  } finally {
    await cleanup();
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  process.exit(1);
});
