// npm run bench, the whole pipeline (issue #13): the service started as `npm start` starts it
// (`node dist/src/cli.js serve`, all roles in one process; or split, 1 api + 1 worker and 2 + 2 on
// PostgreSQL), the provider emulator (`chatgate emulator`, 100 ms latency), a receiver for the
// customers' events and the load generator, each in a process of its own. 32 Pro customers with 5
// accounts each (160) and one endpoint each subscribed to message.status.
//   dispatch: N messages posted over 100 connections while the workers send them (receipts off):
//             accept req/s and p99 with the workers running, sends/s overall and once accepting
//             ended, every `sent` event delivered. Beside it, in the same run: the bare INSERT
//             baselines (bench/baseline-server.ts) under the same load, for the accept ratios, and
//             graphile-worker (bench/graphile-peer.ts) sending N jobs through the same emulator.
//   lifecycle: M messages; the emulator posts signed receipts sent, delivered, read for each, one
//             status per POST, each after the previous was answered, at most 64 POSTs in flight.
//             msg/s = M / (last `read` event received − first request).
// Each: peak RSS of every service process; checks: no duplicate send, every event once, valid
// signatures, every lifecycle message read.
//   BENCH_SCALE=smoke (1,000 + 300 messages, 8 customers, all-in-one only: about a minute) | full
//   (default: the issue's shape, 20,000 + 5,000 messages, 32 customers, every topology)
//   BENCH_MESSAGES, BENCH_LIFECYCLE_MESSAGES, BENCH_WARMUP_MESSAGES, BENCH_CUSTOMERS,
//   BENCH_ACCOUNTS_PER_CUSTOMER, BENCH_CONNECTIONS: override the scale's figures
//   BENCH_BACKENDS (postgres,pglite)  BENCH_TOPOLOGIES (all,1+1,2+2; split ones on PostgreSQL only)
//   BENCH_PHASES (dispatch,lifecycle)  BENCH_PEERS (baselines,graphile,floor; "none" for none)
//   floor: bench/floor.ts, bare node:http + undici doing the lifecycle's eight exchanges per
//          message without framework or database; the report gives the service's CPU as a ratio of it.
// On PostgreSQL the lifecycle also reports rows written (pg_stat_user_tables) and WAL bytes
// (pg_stat_statements for the database if loaded, else pg_stat_wal: the whole server) per message.
//   BENCH_PROFILE=1: --cpu-prof on the service processes, and on PostgreSQL pg_stat_statements
//                    (needs shared_preload_libraries) and pg_stat_activity wait sampling
//   BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_SERVICE_ROOT: another checkout whose build is the service under test (default: this one)
//   BENCH_RECEIPT_DUPLICATES: each lifecycle receipt posted again this many times, right after
//                    itself (a provider redelivering its webhooks; default 0)
//   BENCH_SERVICE_NODE_ARGS: Node flags for the service processes only (e.g. --max-old-space-size=256)
// Needs the build (npm run build): the service runs from dist/ as in production.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import postgres from 'postgres';

import { printSummary, profilesIn, type ProfileSummary, summarise } from './cpuprofile-top.js';
import { type Backend, type BenchDatabase, createDatabase, postgresReachable } from './databases.js';
import { ADMIN_TOKEN, ENCRYPTION_KEY, json } from './live-stack.js';
import {
  type Child,
  cpuMs,
  freePort,
  memoryMb,
  postgresCpuMs,
  rssSampler,
  startNode,
  startTs,
  stop,
  stopAll,
  waitHealthy,
} from './processes.js';
import { writeJson } from './report.js';
import { fakeKeys } from './tenants.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const cli = path.join(root, 'dist', 'src', 'cli.js');
/**
 * The service under test: this tree's build, or another checkout's (BENCH_SERVICE_ROOT, built
 * with `npm run build`) to compare two versions with the same emulator, receiver and load.
 */
const serviceRoot = path.resolve(process.env.BENCH_SERVICE_ROOT ?? root);
const serviceCli = path.join(serviceRoot, 'dist', 'src', 'cli.js');
const resultsDir = path.join(here, 'results');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const APP_SECRET = crypto.randomBytes(16).toString('hex');

const smoke = process.env.BENCH_SCALE === 'smoke';
const int = (name: string, def: number, min = 1) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isInteger(v) || v < min) throw new Error(`${name} must be a whole number from ${min}`);
  return v;
};
const list = (name: string, def: string) =>
  (process.env[name] ?? def)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'none');
const settings = {
  scale: smoke ? 'smoke' : 'full',
  messages: int('BENCH_MESSAGES', smoke ? 1000 : 20_000),
  lifecycleMessages: int('BENCH_LIFECYCLE_MESSAGES', smoke ? 300 : 5000),
  warmupMessages: int('BENCH_WARMUP_MESSAGES', smoke ? 200 : 2000),
  customers: int('BENCH_CUSTOMERS', smoke ? 8 : 32),
  accountsPerCustomer: int('BENCH_ACCOUNTS_PER_CUSTOMER', 5),
  connections: int('BENCH_CONNECTIONS', 100),
  providerLatencyMs: 100,
  receiptPostsInFlight: 64,
  receiptDuplicates: int('BENCH_RECEIPT_DUPLICATES', 0, 0),
  backends: list('BENCH_BACKENDS', 'postgres,pglite') as Backend[],
  topologies: list('BENCH_TOPOLOGIES', smoke ? 'all' : 'all,1+1,2+2') as Topology[],
  phases: list('BENCH_PHASES', 'dispatch,lifecycle'),
  peers: list('BENCH_PEERS', 'baselines,graphile,floor'),
  profile: process.env.BENCH_PROFILE === '1',
  serviceNodeArgs: (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
  databaseUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};
type Topology = 'all' | '1+1' | '2+2';
for (const b of settings.backends) if (b !== 'postgres' && b !== 'pglite') throw new Error(`BENCH_BACKENDS: "${b}"?`);
for (const t of settings.topologies)
  if (!['all', '1+1', '2+2'].includes(t)) throw new Error(`BENCH_TOPOLOGIES: "${t}"?`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load1 = () => Math.round(os.loadavg()[0]! * 10) / 10;
const round = (n: number, d = 0) => Math.round(n * 10 ** d) / 10 ** d;

/** Polls `check` until it answers true; false on timeout. */
async function until(check: () => Promise<boolean>, timeoutMs: number, everyMs = 200): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}
/** Time allowed for a phase to drain: generous, since the point is to measure slow runs too. */
const drainMs = (n: number) => 120_000 + n * 60;

let currentDbs: BenchDatabase[] = [];
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping children and dropping the databases`);
    void stopAll()
      .then(() => Promise.all(currentDbs.map((d) => d.drop().catch(() => {}))))
      .finally(() => process.exit(130));
  });
}
async function freshDb(backend: Backend) {
  const db = await createDatabase(backend, settings.databaseUrl);
  currentDbs.push(db);
  return db;
}
async function dropDb(db: BenchDatabase) {
  await db.drop().catch(() => {});
  currentDbs = currentDbs.filter((d) => d !== db);
}

// ---- the load generator ----

type Sender = { key: string; chatAccountId?: string };
type Load = {
  startedAt: number;
  endedAt: number;
  requests: number;
  requestsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** CPU time the load generator used while sending. */
  cpuMs?: number;
};

async function runLoad(urls: string[], senders: Sender[], amount: number, prefix: string): Promise<Load> {
  const child = startTs('load', path.join(here, 'pipeline-load.ts'), {
    BENCH_LOAD: JSON.stringify({
      urls,
      senders,
      amount,
      connections: settings.connections,
      prefix: `${prefix}${stamp}`,
    }),
  });
  const code = await child.exited;
  const line = child.stdout.join('').trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`load generator failed (${code}):\n${child.output.join('')}`);
  return JSON.parse(line) as Load;
}

// ---- PostgreSQL: statements and waits ----

type PgProfile = {
  statements: { calls: number; totalMs: number; meanMs: number; rows: number; query: string }[];
  totalMs: number;
  calls: number;
  /** Samples of the benchmark database's client backends every 100 ms, by state and wait event. */
  waits: { what: string; samples: number; pct: number }[];
  waitSamples: number;
  error?: string;
};

async function pgProfiler(db: BenchDatabase) {
  const url = db.env.DATABASE_URL!;
  const name = new URL(url).pathname.slice(1);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let error: string | undefined;
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    await sql`SELECT 1 FROM pg_stat_statements LIMIT 1`;
  } catch (err) {
    error = `pg_stat_statements unavailable (${(err as Error).message}); see docs/benchmarks.md`;
  }
  const waits = new Map<string, number>();
  let samples = 0;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    sql<{ what: string; n: number }[]>`
      SELECT coalesce(state, '?') || ' / ' || coalesce(wait_event_type || ':' || wait_event, 'CPU') AS what, count(*)::int AS n
        FROM pg_stat_activity
       WHERE datname = ${name} AND backend_type = 'client backend' AND pid <> pg_backend_pid()
       GROUP BY 1`
      .then((rows) => {
        samples++;
        for (const r of rows) waits.set(r.what, (waits.get(r.what) ?? 0) + r.n);
      })
      .catch(() => {})
      .finally(() => (busy = false));
  }, 100);
  return {
    async reset() {
      waits.clear();
      samples = 0;
      if (!error) await sql`SELECT pg_stat_statements_reset()`.catch(() => {});
    },
    async collect(): Promise<PgProfile> {
      const w = [...waits].sort((a, b) => b[1] - a[1]);
      const totalW = w.reduce((a, [, n]) => a + n, 0);
      const out: PgProfile = {
        statements: [],
        totalMs: 0,
        calls: 0,
        waits: w.map(([what, n]) => ({ what, samples: n, pct: round((n / Math.max(1, totalW)) * 100, 1) })),
        waitSamples: samples,
        ...(error ? { error } : {}),
      };
      if (error) return out;
      const rows = await sql<{ calls: number; total: number; rows: number; query: string }[]>`
        SELECT calls::int, total_exec_time AS total, rows::int, query FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ${name}) ORDER BY total_exec_time DESC`;
      out.totalMs = round(rows.reduce((a, r) => a + r.total, 0));
      out.calls = rows.reduce((a, r) => a + r.calls, 0);
      out.statements = rows.slice(0, 15).map((r) => ({
        calls: r.calls,
        totalMs: round(r.total),
        meanMs: round(r.total / Math.max(1, r.calls), 3),
        rows: r.rows,
        query: r.query.replace(/\s+/g, ' ').slice(0, 220),
      }));
      return out;
    },
    async close() {
      clearInterval(timer);
      await sql.end({ timeout: 1 });
    },
  };
}

// ---- PostgreSQL: rows written and WAL per message ----

type PgWrites = {
  /** n_tup_ins + n_tup_upd + n_tup_del over the benchmark database's tables (pg_stat_user_tables). */
  rows: number;
  byTable: { table: string; ins: number; upd: number; del: number }[];
  /** WAL bytes: pg_stat_statements' wal_bytes for this database if installed, else pg_stat_wal (whole server). */
  walBytes: number;
  walSource: 'pg_stat_statements' | 'pg_stat_wal (whole server)';
};
type PgWriteSnapshot = { tables: Map<string, [number, number, number]>; wal: number; source: PgWrites['walSource'] };

/**
 * Counters read before and after a phase. Backends report table statistics when a transaction
 * ends at most once a second, and an idle one within 10 s: each snapshot waits those out first.
 */
async function pgWriteCounter(db: BenchDatabase) {
  const url = db.env.DATABASE_URL!;
  const name = new URL(url).pathname.slice(1);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const statements = await sql`SELECT 1 FROM pg_stat_statements LIMIT 1`.then(
    () => true,
    () => false,
  );
  const snapshot = async (): Promise<PgWriteSnapshot> => {
    await sleep(11_000);
    await sql`SELECT pg_stat_clear_snapshot()`;
    const rows = await sql<{ t: string; i: string; u: string; d: string }[]>`
      SELECT relname AS t, n_tup_ins AS i, n_tup_upd AS u, n_tup_del AS d FROM pg_stat_user_tables`;
    const wal = statements
      ? await sql<{ b: string | null }[]>`SELECT sum(wal_bytes)::text AS b FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ${name})`
      : await sql<{ b: string | null }[]>`SELECT wal_bytes::text AS b FROM pg_stat_wal`;
    return {
      tables: new Map(rows.map((r) => [r.t, [Number(r.i), Number(r.u), Number(r.d)]])),
      wal: Number(wal[0]?.b ?? 0),
      source: statements ? 'pg_stat_statements' : 'pg_stat_wal (whole server)',
    };
  };
  return {
    snapshot,
    diff(a: PgWriteSnapshot, b: PgWriteSnapshot): PgWrites {
      const byTable = [...b.tables]
        .map(([table, [i, u, d]]) => {
          const [i0, u0, d0] = a.tables.get(table) ?? [0, 0, 0];
          return { table, ins: i - i0, upd: u - u0, del: d - d0 };
        })
        .filter((t) => t.ins + t.upd + t.del > 0)
        .sort((x, y) => y.ins + y.upd + y.del - (x.ins + x.upd + x.del));
      return {
        rows: byTable.reduce((n, t) => n + t.ins + t.upd + t.del, 0),
        byTable,
        walBytes: b.wal - a.wal,
        walSource: b.source,
      };
    },
    close: () => sql.end({ timeout: 1 }),
  };
}

// ---- the floor: bare Node over the same eight exchanges per message (bench/floor.ts) ----

type FloorResult = {
  messages: number;
  events: number;
  messagesWithThreeEvents: number;
  badSignatures: number;
  seconds: number;
  /** CPU of the bare service process (node:http + undici), the figure the service is compared with. */
  serviceCpuMs: number;
  driverCpuMs: number;
  loadAvg1m: number;
};

async function runFloor(messages: number): Promise<FloorResult> {
  const loadAvg1m = load1();
  const [sPort, dPort] = [await freePort(), await freePort()];
  const target = `http://127.0.0.1:${sPort}`;
  const file = path.join(here, 'floor.ts');
  const svc = startTs('floor-service', file, {
    MODE: 'service',
    PORT: String(sPort),
    PEER_URL: `http://127.0.0.1:${dPort}`,
  });
  try {
    const up = await until(async () => (await fetch(`${target}/__cpu`).catch(() => null))?.ok === true, 30_000, 100);
    if (!up) throw new Error(`floor service did not start:\n${svc.output.join('')}`);
    const drv = startTs('floor-driver', file, {
      MODE: 'driver',
      PORT: String(dPort),
      TARGET_URL: target,
      MESSAGES: String(messages),
      CONNECTIONS: String(settings.connections),
    });
    const code = await drv.exited;
    const line = drv.stdout.join('').trim().split('\n').pop() ?? '';
    if (code !== 0 || !line.startsWith('{')) throw new Error(`floor driver failed (${code}):\n${drv.output.join('')}`);
    return { ...(JSON.parse(line) as Omit<FloorResult, 'loadAvg1m'>), loadAvg1m };
  } finally {
    await stop(svc);
  }
}

// ---- baselines ----

type BaselineResult = {
  server: 'single' | 'group';
  backend: Backend;
  loadAvg1m: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number | null;
  non2xx: number;
  errors: number;
};

async function runBaseline(server: 'single' | 'group', backend: Backend): Promise<BaselineResult> {
  const loadAvg1m = load1();
  const db = await freshDb(backend);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startTs(`baseline-${server}`, path.join(here, 'baseline-server.ts'), {
    ...db.env,
    PORT: String(port),
    MODE: server,
  });
  const sampler = rssSampler(() => [child.pid]);
  try {
    await waitHealthy(child, url);
    const senders = fakeKeys(settings.customers * settings.accountsPerCustomer).map((key) => ({ key }));
    await runLoad([url], senders, settings.warmupMessages, 'w');
    sampler.reset();
    const load = await runLoad([url], senders, settings.messages, 'm');
    return {
      server,
      backend,
      loadAvg1m,
      requestsPerSec: round(load.requestsPerSec),
      p50Ms: load.latencyMs.p50,
      p99Ms: load.latencyMs.p99,
      peakRssMb: sampler.peak(child.pid),
      non2xx: load.non2xx,
      errors: load.errors + load.timeouts,
    };
  } finally {
    sampler.stop();
    await stop(child);
    await dropDb(db);
  }
}

// ---- the emulator and the receiver ----

async function startEmulator() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startNode(
    'emulator',
    [cli, 'emulator'],
    {
      EMULATOR_PORT: String(port),
      EMULATOR_LATENCY_MS: String(settings.providerLatencyMs),
      PROVIDER_APP_SECRET: APP_SECRET,
      LOG_LEVEL: 'warn',
    },
    root,
  );
  const up = await until(
    async () => (await fetch(`${url}/__emulator/stats`).catch(() => null))?.ok === true,
    30_000,
    100,
  );
  if (!up) throw new Error(`emulator did not start:\n${child.output.join('')}`);
  // Receipts off until the lifecycle phase.
  await json(`${url}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ enabled: false }) });
  return { child, url };
}

type EmuStats = {
  sent: number;
  webhooks: {
    posts: number;
    retries: number;
    failures: number;
    firstPostAt: number;
    lastAnsweredAt: number;
    inFlight: number;
    waiting: number;
  };
};
type ReceiverStats = {
  received: number;
  unique: number;
  duplicates: number;
  badSignature: number;
  badBody: number;
  statusRepeated: number;
  byStatus: Record<string, number>;
  firstAt: number;
  lastAt: number;
  lastReadAt: number;
  messages: number;
  messagesRead: number;
  messagesComplete: number;
};

// ---- one stack: the service in one or more processes ----

type ProcessMemory = { name: string; peakRssMb: number | null; vmHwmMb: number | null };
type StackResult = {
  backend: Backend;
  topology: Topology;
  loadAvg1m: { start: number; dispatch?: number; lifecycle?: number };
  dispatch?: {
    messages: number;
    accept: { requestsPerSec: number; p50Ms: number; p99Ms: number; non2xx: number; errors: number };
    sendsPerSec: number;
    sendsPerSecAfterAccept: number | null;
    sentWhileAccepting: number;
    acceptSeconds: number;
    lastSendAfterSeconds: number;
    emulatorReceived: number;
    duplicateSends: number;
    events: ReceiverStats;
    memory: ProcessMemory[];
    pg?: PgProfile;
    complete: boolean;
  };
  lifecycle?: {
    messages: number;
    accept: { requestsPerSec: number; p99Ms: number; non2xx: number; errors: number };
    msgPerSec: number | null;
    lastReadAfterSeconds: number | null;
    receiptPosts: number;
    receiptPostsPerSec: number;
    receiptRetries: number;
    receiptFailures: number;
    duplicateSends: number;
    events: ReceiverStats;
    memory: ProcessMemory[];
    pg?: PgProfile;
    /** CPU time of each part of the system from the first request to the last `read` event. */
    cpu: { part: string; ms: number }[];
    /** PostgreSQL only: rows written and WAL over the phase (pgWrites). */
    writes?: PgWrites;
    complete: boolean;
  };
  profiles: { process: string; summary: ProfileSummary }[];
  serverLogLines: number;
  logFile: string | null;
};

async function runStack(backend: Backend, topology: Topology): Promise<StackResult> {
  const result: StackResult = {
    backend,
    topology,
    loadAvg1m: { start: load1() },
    profiles: [],
    serverLogLines: 0,
    logFile: null,
  };
  const db = await freshDb(backend);
  const tag = `${backend}-${topology}`;
  const profRoot = path.join(resultsDir, `${stamp}-pipeline-prof`, tag);
  const emu = await startEmulator();
  const rPort = await freePort();
  const receiverUrl = `http://127.0.0.1:${rPort}`;
  const receiver = startTs('receiver', path.join(here, 'event-receiver.ts'), { PORT: String(rPort) });
  const services: Child[] = [];
  const pg = settings.profile && backend === 'postgres' ? await pgProfiler(db) : null;
  const writes = backend === 'postgres' ? await pgWriteCounter(db) : null;
  const sampler = rssSampler(() => services.map((s) => s.pid));
  try {
    await waitHealthy(receiver, receiverUrl);
    const common: Record<string, string> = {
      ...db.env,
      ADMIN_TOKEN,
      PROVIDER_BASE_URL: emu.url,
      PROVIDER_APP_SECRET: APP_SECRET,
      UNSAFE_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      ...(backend === 'postgres' ? { ENCRYPTION_KEY } : {}),
      // Four processes with the default pool of 20 would take most of the server's 100 connections.
      ...(topology === '2+2' ? { DB_POOL_SIZE: '12' } : {}),
    };
    const [apiCount, workerCount] = topology === 'all' ? [1, 0] : topology === '1+1' ? [1, 1] : [2, 2];
    const start = (role: string, i: number, port?: number) => {
      const name = `${role}${i + 1}`;
      const prof = settings.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profRoot, name)}`] : [];
      const env = { ...common, ...(port !== undefined ? { PORT: String(port) } : {}) };
      const child = startNode(
        name,
        [...prof, ...settings.serviceNodeArgs, serviceCli, 'serve', '--role', role],
        env,
        serviceRoot,
      );
      services.push(child);
      return child;
    };
    const apiUrls: string[] = [];
    for (let i = 0; i < apiCount; i++) {
      const port = await freePort();
      const child = start(topology === 'all' ? 'all' : 'api', i, port);
      apiUrls.push(`http://127.0.0.1:${port}`);
      // One at a time: the first runs the migrations.
      await waitHealthy(child, apiUrls[i]!);
    }
    for (let i = 0; i < workerCount; i++) start('worker', i);
    const setupLines = () => services.reduce((n, s) => n + s.output.length, 0);

    // Tenants: each customer's accounts are reached through one API process's provider webhook.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const perCustomer: Sender[][] = [];
    const secrets: Record<string, string> = {};
    for (let c = 0; c < settings.customers; c++) {
      const api = apiUrls[c % apiUrls.length]!;
      const customer = await json(`${apiUrls[0]}/admin/customers`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `Bench ${c}`, plan: 'pro' }),
      });
      const { key } = await json(`${apiUrls[0]}/admin/customers/${customer.id}/api-keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ sandbox: false }),
      });
      const senders: Sender[] = [];
      for (let a = 0; a < settings.accountsPerCustomer; a++) {
        const phoneNumberId = `pipe${c}x${a}${crypto.randomBytes(3).toString('hex')}`;
        const account = await json(`${apiUrls[0]}/admin/customers/${customer.id}/chat-accounts`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({
            type: 'OFFICIAL',
            phoneNumber: `+1555${String(c * 100 + a).padStart(7, '0')}`,
            displayName: `b${c}-${a}`,
            official: { phoneNumberId, wabaId: `waba${c}`, accessToken: 't' },
          }),
        });
        await json(`${emu.url}/__emulator/numbers/${phoneNumberId}`, {
          method: 'PUT',
          body: JSON.stringify({ callbackUrl: `${api}/provider/webhooks/app` }),
        });
        senders.push({ key, chatAccountId: account.id as string });
      }
      perCustomer.push(senders);
      const hookPath = `/hook/${c}`;
      const endpoint = await json(`${apiUrls[0]}/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': key },
        body: JSON.stringify({ url: `${receiverUrl}${hookPath}`, events: ['message.status'] }),
      });
      secrets[hookPath] = endpoint.secret as string;
    }
    await json(`${receiverUrl}/__secrets`, { method: 'PUT', body: JSON.stringify(secrets) });
    // In turn: account 0 of every customer, then account 1 of every customer, …
    const senders = Array.from({ length: settings.accountsPerCustomer }, (_, a) =>
      perCustomer.map((s) => s[a]!),
    ).flat();

    const emuStats = async () => (await json(`${emu.url}/__emulator/stats`)) as EmuStats;
    const rStats = async () => (await json(`${receiverUrl}/__stats`)) as ReceiverStats;
    const sentList = async () =>
      ((await json(`${emu.url}/__emulator/sent`)).sent as { messageId: string | null; at: number }[]) ?? [];
    const dupSends = (sent: { messageId: string | null }[]) => sent.length - new Set(sent.map((s) => s.messageId)).size;
    const memory = (): ProcessMemory[] =>
      services.map((s) => ({ name: s.name, peakRssMb: sampler.peak(s.pid), vmHwmMb: memoryMb(s.pid).peakRssMb }));
    const resetCounters = async () => {
      await json(`${emu.url}/__emulator/sent`, { method: 'DELETE' });
      await json(`${emu.url}/__emulator/stats`, { method: 'DELETE' });
      await fetch(`${receiverUrl}/__stats`, { method: 'DELETE' });
    };

    // Warm-up: the same load, smaller, drained (sent and its events delivered) before measuring.
    const w = settings.warmupMessages;
    await runLoad(apiUrls, senders, w, 'w');
    await until(async () => (await emuStats()).sent >= w && ((await rStats()).byStatus.sent ?? 0) >= w, drainMs(w));
    const lines0 = setupLines();

    if (settings.phases.includes('dispatch')) {
      const n = settings.messages;
      await resetCounters();
      await pg?.reset();
      sampler.reset();
      result.loadAvg1m.dispatch = load1();
      const load = await runLoad(apiUrls, senders, n, 'm');
      const allSent = await until(async () => (await emuStats()).sent >= load.ok2xx, drainMs(n));
      const sent = await sentList();
      const lastSend = Math.max(...sent.map((s) => s.at));
      const afterAccept = sent.filter((s) => s.at > load.endedAt).length;
      // Every `sent` event in before the next phase (a late one would be counted there).
      const allEvents = await until(async () => ((await rStats()).byStatus.sent ?? 0) >= load.ok2xx, drainMs(n));
      result.dispatch = {
        messages: n,
        accept: {
          requestsPerSec: round(load.requestsPerSec),
          p50Ms: load.latencyMs.p50,
          p99Ms: load.latencyMs.p99,
          non2xx: load.non2xx,
          errors: load.errors + load.timeouts,
        },
        sendsPerSec: round((sent.length * 1000) / Math.max(1, lastSend - load.startedAt)),
        sendsPerSecAfterAccept:
          afterAccept > 1 ? round((afterAccept * 1000) / Math.max(1, lastSend - load.endedAt)) : null,
        sentWhileAccepting: sent.length - afterAccept,
        acceptSeconds: round((load.endedAt - load.startedAt) / 1000, 1),
        lastSendAfterSeconds: round((lastSend - load.startedAt) / 1000, 1),
        emulatorReceived: sent.length,
        duplicateSends: dupSends(sent),
        events: await rStats(),
        memory: memory(),
        ...(pg ? { pg: await pg.collect() } : {}),
        complete: allSent && allEvents && load.non2xx === 0,
      };
    }

    if (settings.phases.includes('lifecycle')) {
      const m = settings.lifecycleMessages;
      await resetCounters();
      await json(`${emu.url}/__emulator/settings`, {
        method: 'PUT',
        body: JSON.stringify({
          enabled: true,
          statuses: ['sent', 'delivered', 'read'],
          batch: false,
          order: 'in-order',
          duplicates: settings.receiptDuplicates,
          maxInFlight: settings.receiptPostsInFlight,
          callbackUrl: `${apiUrls[0]}/provider/webhooks/app`,
          appSecret: APP_SECRET,
        }),
      });
      await pg?.reset();
      const writes0 = await writes?.snapshot();
      sampler.reset();
      result.loadAvg1m.lifecycle = load1();
      const parts = [...services, emu.child, receiver].map((c) => ({ part: c.name, pid: c.pid }));
      const cpuNow = () => [
        ...parts.map((p) => ({ part: p.part, ms: cpuMs(p.pid) ?? 0 })),
        ...(backend === 'postgres' ? [{ part: 'PostgreSQL', ms: postgresCpuMs() ?? 0 }] : []),
      ];
      const cpuBefore = cpuNow();
      const load = await runLoad(apiUrls, senders, m, 'l');
      const allRead = await until(async () => (await rStats()).messagesRead >= load.ok2xx, drainMs(m * 3));
      const cpu = cpuNow().map((c, i) => ({ part: c.part, ms: c.ms - cpuBefore[i]!.ms }));
      if (load.cpuMs !== undefined) cpu.push({ part: 'load generator', ms: load.cpuMs });
      const readAt = (await rStats()).lastReadAt;
      // Events are not delivered in order (a `read` may arrive before its `delivered`): let the
      // last receipts and events settle, then count.
      await until(async () => {
        const s = await emuStats();
        return s.webhooks.inFlight === 0 && s.webhooks.waiting === 0;
      }, 30_000);
      await until(async () => (await rStats()).messagesComplete >= load.ok2xx, 60_000);
      const events = await rStats();
      const es = await emuStats();
      const sent = await sentList();
      const span = es.webhooks.lastAnsweredAt - es.webhooks.firstPostAt;
      const writes1 = writes0 ? await writes!.snapshot() : undefined;
      result.lifecycle = {
        messages: m,
        accept: {
          requestsPerSec: round(load.requestsPerSec),
          p99Ms: load.latencyMs.p99,
          non2xx: load.non2xx,
          errors: load.errors + load.timeouts,
        },
        msgPerSec: allRead && readAt > 0 ? round((load.ok2xx * 1000) / (readAt - load.startedAt)) : null,
        lastReadAfterSeconds: readAt > 0 ? round((readAt - load.startedAt) / 1000, 1) : null,
        receiptPosts: es.webhooks.posts,
        receiptPostsPerSec: span > 0 ? round((es.webhooks.posts * 1000) / span) : 0,
        receiptRetries: es.webhooks.retries,
        receiptFailures: es.webhooks.failures,
        duplicateSends: dupSends(sent),
        events,
        memory: memory(),
        ...(pg ? { pg: await pg.collect() } : {}),
        cpu,
        ...(writes0 && writes1 ? { writes: writes!.diff(writes0, writes1) } : {}),
        complete: allRead && load.non2xx === 0,
      };
    }
    result.serverLogLines = setupLines() - lines0;
  } finally {
    sampler.stop();
    for (const s of services) await stop(s, 15_000);
    await stop(emu.child);
    await stop(receiver);
    await pg?.close();
    await writes?.close();
    const output = services.map((s) => `==== ${s.name}\n${s.output.join('')}`).join('\n');
    if (services.some((s) => s.output.join('').trim() !== '')) {
      fs.mkdirSync(resultsDir, { recursive: true });
      result.logFile = path.join(resultsDir, `${stamp}-pipeline-${tag}.log`);
      fs.writeFileSync(result.logFile, output);
    }
    await dropDb(db);
  }
  if (settings.profile)
    for (const s of services) {
      const file = profilesIn(path.join(profRoot, s.name))[0];
      if (file) result.profiles.push({ process: s.name, summary: summarise(file, 30) });
    }
  return result;
}

// ---- the graphile-worker peer ----

type PeerResult = {
  peer: 'graphile-worker';
  loadAvg1m: number;
  jobs: number;
  jobsPerSec: number;
  jobsPerSecAfterEnqueue: number | null;
  enqueueSeconds: number;
  failedAttempts: number;
  duplicateSends: number;
  peakRssMb: number | null;
};

async function runGraphile(): Promise<PeerResult> {
  const loadAvg1m = load1();
  const db = await freshDb('postgres');
  const emu = await startEmulator();
  const phoneIds = Array.from({ length: settings.customers * settings.accountsPerCustomer }, (_, i) => `gw${i}`);
  let peer: Child | null = null;
  const sampler = rssSampler(() => (peer ? [peer.pid] : []));
  try {
    peer = startTs('graphile-worker', path.join(here, 'graphile-peer.ts'), {
      DATABASE_URL: db.env.DATABASE_URL!,
      EMU_URL: emu.url,
      PHONE_IDS: phoneIds.join(','),
      JOBS: String(settings.messages),
      CONCURRENCY: '1000',
    });
    const timer = setTimeout(() => void stop(peer!, 2000), drainMs(settings.messages) + 60_000);
    const code = await peer.exited;
    clearTimeout(timer);
    const line = peer.stdout.join('').trim().split('\n').pop() ?? '';
    if (code !== 0 || !line.startsWith('{'))
      throw new Error(`graphile peer failed (${code}):\n${peer.output.join('')}`);
    const out = JSON.parse(line) as {
      jobs: number;
      enqueueStartedAt: number;
      enqueueEndedAt: number;
      failedAttempts: number;
    };
    const sent = ((await json(`${emu.url}/__emulator/sent`)).sent as { messageId: string; at: number }[]) ?? [];
    const ok = new Set(sent.map((s) => s.messageId));
    const last = Math.max(...sent.map((s) => s.at));
    const after = sent.filter((s) => s.at > out.enqueueEndedAt).length;
    return {
      peer: 'graphile-worker',
      loadAvg1m,
      jobs: out.jobs,
      jobsPerSec: round((sent.length * 1000) / Math.max(1, last - out.enqueueStartedAt)),
      jobsPerSecAfterEnqueue: after > 1 ? round((after * 1000) / Math.max(1, last - out.enqueueEndedAt)) : null,
      enqueueSeconds: round((out.enqueueEndedAt - out.enqueueStartedAt) / 1000, 1),
      failedAttempts: out.failedAttempts,
      duplicateSends: sent.length - ok.size,
      peakRssMb: sampler.peak(peer.pid),
    };
  } finally {
    sampler.stop();
    if (peer) await stop(peer);
    await stop(emu.child);
    await dropDb(db);
  }
}

// ---- the report ----

const DB: Record<Backend, string> = { postgres: 'PostgreSQL', pglite: 'embedded' };
// Issue #26's lifecycle targets (≥ 600 msg/s on PostgreSQL, ≥ 350 embedded; issue #13 had 1,000 and 500).
const TARGET = {
  postgres: { vsGroup: 0.5, vsSingle: 1.0, p99Ms: 20 as number | null, lifecycle: 600, serviceCpuMs: 1.2, rssMb: 300 },
  pglite: {
    vsGroup: 0.4,
    vsSingle: null as number | null,
    p99Ms: null as number | null,
    lifecycle: 350,
    serviceCpuMs: 2.5,
    rssMb: 500,
  },
};
const f = (n: number | null | undefined, d = 0) =>
  n === null || n === undefined
    ? 'n/a'
    : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const ok = (b: boolean) => (b ? 'met' : 'MISSED');

function report(
  baselines: BaselineResult[],
  stacks: StackResult[],
  peers: PeerResult[],
  floor: FloorResult | null,
): string[] {
  const lines: string[] = [];
  const say = (s = '') => lines.push(s);
  const floorPerMsg = floor ? floor.serviceCpuMs / Math.max(1, floor.messagesWithThreeEvents) : null;
  if (floor)
    say(
      `\nFloor (bare node:http + undici over keep-alive, no framework, no database; the same eight exchanges per message): ${f(floorPerMsg, 3)} ms of CPU per message in the service's place (${f(floor.messagesWithThreeEvents)} of ${f(floor.messages)} messages with 3 events, ${floor.badSignatures} bad signatures; the driver ${f(floor.driverCpuMs / Math.max(1, floor.messages), 3)} ms) (load ${floor.loadAvg1m})`,
    );
  const graphile = peers[0];
  if (baselines.length > 0 || graphile) say(`\nBaselines and peer (same run):`);
  for (const b of baselines)
    say(
      `  ${b.server === 'single' ? 'one INSERT per request' : 'group-commit INSERT   '} / ${DB[b.backend].padEnd(10)} ${f(b.requestsPerSec)} req/s, p99 ${b.p99Ms} ms, peak RSS ${f(b.peakRssMb)} MB${b.non2xx + b.errors > 0 ? `, ${b.non2xx} non-2xx, ${b.errors} errors` : ''} (load ${b.loadAvg1m})`,
    );
  if (graphile)
    say(
      `  graphile-worker (batched, 1000 at a time) / PostgreSQL: ${f(graphile.jobsPerSec)} jobs/s overall, ${f(graphile.jobsPerSecAfterEnqueue)} once enqueued (enqueue ${graphile.enqueueSeconds} s), ${graphile.failedAttempts} failed attempts, ${graphile.duplicateSends} duplicate sends, peak RSS ${f(graphile.peakRssMb)} MB (load ${graphile.loadAvg1m})`,
    );
  for (const s of stacks) {
    const t = TARGET[s.backend];
    const base = (srv: 'single' | 'group') => baselines.find((b) => b.backend === s.backend && b.server === srv);
    const name = `${DB[s.backend]}, ${s.topology === 'all' ? 'npm start (all roles, 1 process)' : `${s.topology.replace('+', ' api + ')} worker`}`;
    say(`\n${name} (load average ${s.loadAvg1m.start} at start):`);
    const d = s.dispatch;
    if (d) {
      const vsG = base('group') ? d.accept.requestsPerSec / base('group')!.requestsPerSec : null;
      const vsS = base('single') ? d.accept.requestsPerSec / base('single')!.requestsPerSec : null;
      // Without the baselines in this run the ratios, and so the verdict, are unknown.
      const accTarget =
        vsG === null || (t.vsSingle !== null && vsS === null)
          ? null
          : vsG >= t.vsGroup &&
            (t.vsSingle === null || vsS! >= t.vsSingle) &&
            (t.p99Ms === null || d.accept.p99Ms <= t.p99Ms);
      say(
        `  accept (workers running): ${f(d.accept.requestsPerSec)} req/s, p50 ${d.accept.p50Ms} ms, p99 ${d.accept.p99Ms} ms = ${f(vsG, 2)} × group-commit, ${f(vsS, 2)} × per-request` +
          ` [target ≥ ${t.vsGroup} × group${t.vsSingle ? `, ≥ ${t.vsSingle} × per-request` : ''}${t.p99Ms ? `, p99 ≤ ${t.p99Ms} ms` : ''}: ${accTarget === null ? 'n/a' : ok(accTarget)}]` +
          (d.accept.non2xx + d.accept.errors > 0 ? ` ${d.accept.non2xx} non-2xx, ${d.accept.errors} errors` : ''),
      );
      const vsPeer = graphile ? d.sendsPerSec / graphile.jobsPerSec : null;
      say(
        `  dispatch: ${f(d.emulatorReceived)} of ${f(d.messages)} sent, ${f(d.sendsPerSec)} sends/s overall (last send ${d.lastSendAfterSeconds} s after the first request; accepting took ${d.acceptSeconds} s), ${f(d.sendsPerSecAfterAccept)}/s once accepting ended = ${f(vsPeer, 2)} × graphile-worker [target ≥ 1.0 ×: ${vsPeer === null ? 'n/a' : ok(vsPeer >= 1)}]`,
      );
      say(
        `  checks: ${d.duplicateSends} duplicate sends; events: ${f(d.events.unique)} unique of ${f(d.events.received)} received, ${d.events.duplicates} duplicates, ${d.events.badSignature} bad signatures${d.complete ? '' : '; INCOMPLETE (timed out or non-2xx)'}`,
      );
      say(
        `  memory: ${d.memory.map((m) => `${m.name} peak ${f(m.peakRssMb)} MB`).join(', ')} (load ${s.loadAvg1m.dispatch})`,
      );
    }
    const l = s.lifecycle;
    if (l) {
      say(
        `  lifecycle: ${f(l.msgPerSec)} msg/s (${f(l.events.messagesRead)} of ${f(l.messages)} read, the last ${l.lastReadAfterSeconds} s after the first request) [target ≥ ${t.lifecycle}: ${ok((l.msgPerSec ?? 0) >= t.lifecycle)}]; accept ${f(l.accept.requestsPerSec)} req/s, p99 ${l.accept.p99Ms} ms`,
      );
      say(
        `  receipts: ${f(l.receiptPosts)} POSTs, ${f(l.receiptPostsPerSec)}/s, ${l.receiptRetries} retried, ${l.receiptFailures} given up`,
      );
      say(
        `  checks: ${l.duplicateSends} duplicate sends; events ${JSON.stringify(l.events.byStatus)}, ${f(l.events.messagesComplete)} messages with sent+delivered+read, ${l.events.duplicates} duplicate event ids, ${l.events.statusRepeated} repeated statuses, ${l.events.badSignature} bad signatures${l.complete ? '' : '; INCOMPLETE (timed out or non-2xx)'}`,
      );
      const perMsg = (ms: number) => ms / Math.max(1, l.events.messagesRead);
      const cpuTotal = l.cpu.reduce((n, c) => n + c.ms, 0);
      say(
        `  CPU per message read: ${l.cpu.map((c) => `${c.part} ${f(perMsg(c.ms), 2)} ms`).join(', ')}; all ${f(perMsg(cpuTotal), 2)} ms = at most ${f((os.cpus().length * 1000) / Math.max(0.001, perMsg(cpuTotal)))} msg/s on ${os.cpus().length} cores at this cost`,
      );
      const serviceMs = perMsg(l.cpu.filter((c) => /^(all|api|worker)\d/.test(c.part)).reduce((n, c) => n + c.ms, 0));
      say(
        `  service CPU per message: ${f(serviceMs, 2)} ms [target ≤ ${t.serviceCpuMs} ms: ${ok(serviceMs <= t.serviceCpuMs)}]` +
          (floorPerMsg ? ` = ${f(serviceMs / floorPerMsg, 1)} × bare Node's ${f(floorPerMsg, 3)} ms (the floor)` : ''),
      );
      if (l.writes)
        say(
          `  PostgreSQL writes per message read: ${f(l.writes.rows / Math.max(1, l.events.messagesRead), 1)} rows (${l.writes.byTable
            .slice(0, 8)
            .map((t) => `${t.table} ${f((t.ins + t.upd + t.del) / Math.max(1, l.events.messagesRead), 1)}`)
            .join(
              ', ',
            )}), ${f(l.writes.walBytes / Math.max(1, l.events.messagesRead))} WAL bytes (${l.writes.walSource})`,
        );
      const peak = Math.max(...l.memory.map((m) => m.peakRssMb ?? 0));
      say(
        `  memory: ${l.memory.map((m) => `${m.name} peak ${f(m.peakRssMb)} MB (VmHWM ${f(m.vmHwmMb)})`).join(', ')} [target ≤ ${t.rssMb} MB per process: ${ok(peak <= t.rssMb)}] (load ${s.loadAvg1m.lifecycle})`,
      );
    }
    if (s.serverLogLines > 0) say(`  the service logged ${s.serverLogLines} lines under load: ${s.logFile}`);
  }
  return lines;
}

function printProfiles(stacks: StackResult[]) {
  for (const s of stacks) {
    for (const phase of ['dispatch', 'lifecycle'] as const) {
      const pgp = s[phase]?.pg;
      if (!pgp) continue;
      console.log(`\n${DB[s.backend]} ${s.topology}, ${phase}: PostgreSQL`);
      if (pgp.error) console.log(`  ${pgp.error}`);
      else {
        console.log(`  statements: ${f(pgp.calls)} calls, ${f(pgp.totalMs)} ms executing; top by total time:`);
        for (const st of pgp.statements.slice(0, 10))
          console.log(
            `    ${f(st.totalMs).padStart(9)} ms ${f(st.calls).padStart(8)} calls ${String(st.meanMs).padStart(7)} ms/call  ${st.query.slice(0, 140)}`,
          );
      }
      console.log(`  client backends by state / wait (${pgp.waitSamples} samples):`);
      for (const w of pgp.waits.slice(0, 10)) console.log(`    ${String(w.pct).padStart(5)} %  ${w.what}`);
    }
    for (const p of s.profiles) printSummary(p.summary, 20);
  }
}

async function main() {
  for (const built of new Set([cli, serviceCli]))
    if (!fs.existsSync(built)) throw new Error(`${built} is missing: npm run build first (in its checkout)`);
  const startedAt = new Date().toISOString();
  const commit = (() => {
    try {
      const dirty =
        execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: serviceRoot }).length > 0;
      return `${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: serviceRoot }).toString().trim()}${dirty ? '+changes' : ''}`;
    } catch {
      return null;
    }
  })();
  console.log(
    `Pipeline bench (${settings.scale}, commit ${commit}): ${settings.messages} + ${settings.lifecycleMessages} messages, ${settings.customers} customers × ${settings.accountsPerCustomer} accounts, ${settings.connections} connections, provider latency ${settings.providerLatencyMs} ms; ${os.cpus().length} CPUs, Node ${process.version}, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')}`,
  );
  const backends = [...settings.backends];
  if (backends.includes('postgres') && !(await postgresReachable(settings.databaseUrl))) {
    console.log(`PostgreSQL is not reachable at ${settings.databaseUrl}: skipping its scenarios`);
    backends.splice(backends.indexOf('postgres'), 1);
  }
  const baselines: BaselineResult[] = [];
  const stacks: StackResult[] = [];
  const peers: PeerResult[] = [];
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    process.stdout.write(`  ${label} (load ${load1()}) ... `);
    const r = await fn();
    console.log(`${((Date.now() - t0) / 1000).toFixed(0)} s`);
    return r;
  };
  for (const backend of backends) {
    if (settings.peers.includes('baselines'))
      for (const server of ['single', 'group'] as const)
        baselines.push(await step(`baseline ${server} on ${backend}`, () => runBaseline(server, backend)));
    for (const topology of settings.topologies) {
      if (backend === 'pglite' && topology !== 'all') continue; // one process per embedded database
      stacks.push(await step(`ChatGate ${topology} on ${backend}`, () => runStack(backend, topology)));
    }
    if (backend === 'postgres' && settings.peers.includes('graphile'))
      peers.push(await step('graphile-worker on postgres', () => runGraphile()));
  }
  // The floor with the lifecycle's message count, after the stacks so it runs on the same machine state.
  const floor =
    settings.phases.includes('lifecycle') && settings.peers.includes('floor')
      ? await step('floor (bare Node)', () => runFloor(settings.lifecycleMessages))
      : null;
  const lines = report(baselines, stacks, peers, floor);
  for (const l of lines) console.log(l);
  if (settings.profile) printProfiles(stacks);
  const file = writeJson(resultsDir, `${stamp}-pipeline`, {
    startedAt,
    finishedAt: new Date().toISOString(),
    commit,
    settings,
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model,
      node: process.version,
      totalMemMb: Math.round(os.totalmem() / 2 ** 20),
      loadAvgAtEnd: os.loadavg(),
    },
    baselines,
    stacks,
    peers,
    floor,
    report: lines,
  });
  console.log(`\nResults: ${path.relative(process.cwd(), file)}`);
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stopAll();
  await Promise.all(currentDbs.map((d) => d.drop().catch(() => {})));
  process.exit(1);
});
