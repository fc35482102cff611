// npm run bench: POST /messages of ChatGate against two bare baselines (one INSERT per request,
// and adaptive group commit), each on PostgreSQL and on PGlite, one fresh database and one server
// process per scenario, autocannon in a process of its own. Not part of the tests.
//   BENCH_DURATION (s, default 10)  BENCH_WARMUP (s, default 3)  BENCH_CONNECTIONS (default 100)
//   BENCH_CUSTOMERS (default 20)    BENCH_BACKENDS (default postgres,pglite)
//   BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_SERVICE_ROOT: another checkout whose build (npm run build) is ours (default: this one)
//   BENCH_CPU_PROF=1 writes a V8 CPU profile of each server to bench/results/<timestamp>-prof/
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Backend, type BenchDatabase, createDatabase, postgresReachable } from './databases.js';
import { type Child, freePort, memoryMb, startNode, startTs, stop, stopAll, waitHealthy } from './processes.js';
import { printReport, type ScenarioResult, type Server, writeJson } from './report.js';
import { createKeys, fakeKeys, QUOTA_PER_CUSTOMER } from './tenants.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const int = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a whole number`);
  return v;
};
const settings = {
  durationSec: int('BENCH_DURATION', 10),
  warmupSec: int('BENCH_WARMUP', 3),
  connections: int('BENCH_CONNECTIONS', 100),
  customers: Math.max(1, int('BENCH_CUSTOMERS', 20)),
  backends: (process.env.BENCH_BACKENDS ?? 'postgres,pglite').split(',').map((s) => s.trim()) as Backend[],
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};
for (const b of settings.backends)
  if (b !== 'postgres' && b !== 'pglite') throw new Error(`BENCH_BACKENDS: unknown "${b}"`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const resultsDir = path.join(here, 'results');
const ADMIN_TOKEN = crypto.randomBytes(24).toString('hex');

// What to undo if the run is interrupted: children are stopped by pid, the database dropped.
let currentDb: BenchDatabase | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping children and dropping the scenario database`);
    void stopAll()
      .then(() => currentDb?.drop())
      .finally(() => process.exit(130));
  });
}

function startServer(server: Server, db: BenchDatabase, port: number): Child {
  const env = { ...db.env, PORT: String(port), HOST: '127.0.0.1' };
  // One profile per thread (tsx's loader runs in a worker); the largest is the server's main thread.
  const profDir = path.join(resultsDir, `${stamp}-prof`, `${server}-${db.backend}`);
  const nodeArgs = process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
  if (server === 'ours') {
    const secrets = { ADMIN_TOKEN, ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') };
    // As `npm start` runs it (the built service, default log level), the API role alone: the
    // workers would be sending what is accepted, and this run measures acceptance.
    const root = path.resolve(process.env.BENCH_SERVICE_ROOT ?? path.join(here, '..'));
    const cli = path.join(root, 'dist', 'src', 'cli.js');
    return startNode('chatgate', [...nodeArgs, cli, 'serve', '--role', 'api'], { ...env, ...secrets }, root);
  }
  return startTs(`baseline-${server}`, path.join(here, 'baseline-server.ts'), { ...env, MODE: server }, nodeArgs);
}

/** A pino line below warn (level 40). */
function belowWarn(line: string): boolean {
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level === 'number' && level < 40;
  } catch {
    return false;
  }
}

type LoadOutput = Omit<
  ScenarioResult,
  'server' | 'backend' | 'rssMb' | 'peakRssMb' | 'rows' | 'serverErrorLines' | 'logFile' | 'warnings'
> & {
  warmup2xx: number;
  warmupNon2xx: number;
  warmupErrors: number;
};

async function runLoad(url: string, keys: string[]): Promise<LoadOutput> {
  const load = startTs('autocannon', path.join(here, 'load.ts'), {
    BENCH_LOAD: JSON.stringify({
      url,
      keys,
      connections: settings.connections,
      duration: settings.durationSec,
      warmup: settings.warmupSec,
    }),
  });
  const limit = setTimeout(() => void stop(load, 2000), (settings.warmupSec + settings.durationSec + 60) * 1000);
  const code = await load.exited;
  clearTimeout(limit);
  const line = load.stdout.join('').trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`load generator failed (exit ${code}):\n${load.output.join('')}`);
  return JSON.parse(line) as LoadOutput;
}

async function runScenario(server: Server, backend: Backend): Promise<ScenarioResult> {
  const loadAvg1m = os.loadavg()[0]!;
  const db = (currentDb = await createDatabase(backend, settings.databaseUrl));
  const logFile = path.join(resultsDir, `${stamp}-${server}-${backend}.log`);
  let child: Child | null = null;
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    child = startServer(server, db, port);
    await waitHealthy(child, url);
    const keys =
      server === 'ours' ? await createKeys(url, ADMIN_TOKEN, settings.customers) : fakeKeys(settings.customers);
    const setupLines = child.output.length;

    const load = await runLoad(url, keys);
    const memory = memoryMb(child.pid);
    await stop(child);
    const exitCode = child.proc.exitCode;

    // What the server printed under load at warn and above (or not as a log line at all); our
    // service logs each request at info, as `npm start` runs it, which is not a warning.
    const logged = child.output
      .slice(setupLines)
      .join('')
      .split('\n')
      .filter((l) => l.trim() !== '' && !belowWarn(l));
    const rows = await db.count(server === 'ours' ? 'messages' : 'bench_messages');
    const answered2xx = load.ok2xx + load.warmup2xx;

    const warnings: string[] = [];
    if (load.non2xx > 0)
      warnings.push(`${load.non2xx} non-2xx answers (${JSON.stringify(load.statusCodes)}): the figure is not valid`);
    if (load.errors + load.timeouts > 0) warnings.push(`${load.errors} socket errors, ${load.timeouts} timeouts`);
    if (load.warmupNon2xx + load.warmupErrors > 0)
      warnings.push(`warm-up: ${load.warmupNon2xx} non-2xx, ${load.warmupErrors} errors`);
    if (logged.length > 0)
      warnings.push(`server logged ${logged.length} lines under load (see ${path.relative(process.cwd(), logFile)})`);
    if (exitCode !== 0) warnings.push(`server exit code ${exitCode} on SIGTERM`);
    // In-flight requests at the end of the run are written but not counted by autocannon.
    if (rows < answered2xx || rows > answered2xx + 2 * settings.connections)
      warnings.push(`${rows} rows stored for ${answered2xx} 2xx answers`);
    if (server === 'ours' && (answered2xx + load.non2xx) / keys.length > 0.9 * QUOTA_PER_CUSTOMER) {
      warnings.push(`close to the monthly quota per customer: raise BENCH_CUSTOMERS`);
    }
    return {
      server,
      backend,
      ...load,
      ...memory,
      rows,
      serverErrorLines: logged.length,
      loadAvg1m,
      logFile: child.output.join('').trim() === '' ? null : logFile,
      warnings,
    };
  } finally {
    if (child) {
      await stop(child);
      const output = child.output.join('');
      if (output.trim() !== '') {
        fs.mkdirSync(resultsDir, { recursive: true });
        fs.writeFileSync(logFile, output);
      }
    }
    await db.drop();
    currentDb = null;
  }
}

async function main() {
  const startedAt = new Date().toISOString();
  console.log(
    `ChatGate bench: ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s per scenario, ` +
      `${settings.customers} customers, ${os.cpus().length} CPUs, Node ${process.version}`,
  );
  const backends = [...settings.backends];
  if (backends.includes('postgres') && !(await postgresReachable(settings.databaseUrl))) {
    console.log(`PostgreSQL is not reachable at ${settings.databaseUrl}: skipping its scenarios`);
    backends.splice(backends.indexOf('postgres'), 1);
  }
  const results: ScenarioResult[] = [];
  for (const backend of backends) {
    for (const server of ['ours', 'single', 'group'] as const) {
      const t0 = Date.now();
      // Other work on the machine skews the figures: the load average is printed with each.
      process.stdout.write(`  ${server} on ${backend} ... `);
      const r = await runScenario(server, backend);
      results.push(r);
      console.log(
        `${r.requestsPerSec.toFixed(0)} req/s, p99 ${r.latencyMs.p99} ms (${((Date.now() - t0) / 1000).toFixed(0)} s, load average ${r.loadAvg1m.toFixed(1)})`,
      );
    }
  }
  const verdicts = printReport(results, settings.connections);
  const file = writeJson(resultsDir, stamp, {
    startedAt,
    finishedAt: new Date().toISOString(),
    settings,
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      totalMemMb: Math.round(os.totalmem() / 2 ** 20),
    },
    results,
    verdicts,
  });
  console.log(`\nResults: ${path.relative(process.cwd(), file)}`);
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  await currentDb?.drop().catch(() => {});
  process.exit(1);
});
