// The fault drill's systems under test, each started from the build as the README starts it:
//   postgres: a fresh PostgreSQL database (dropped at the end), `serve --role api` and
//             `serve --role worker` (/readyz on WORKER_STATUS_PORT), both reaching PostgreSQL
//             through the fault proxy of test/support/fault-proxy.ts (reset, stall);
//   embedded: `serve` (all roles: one process per embedded database) with DATA_DIR on a small
//             tmpfs, which the drill fills and frees (needs root in a private mount namespace:
//             the drill re-runs itself under `unshare --mount`).
// And the provider: `chatgate emulator`, reached through the accept gate (bench/accept-gate.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

import { type FaultProxy, startFaultProxy } from '../test/support/fault-proxy.js';
import { type AcceptGate, startAcceptGate } from './accept-gate.js';
import { createDatabase } from './databases.js';
import { ADMIN_TOKEN, benchAccount, ENCRYPTION_KEY, json } from './live-stack.js';
import { type Child, freePort, startNode, stop, waitHealthy } from './processes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..');
export const cli = path.join(root, 'dist', 'src', 'cli.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Emulator = { url: string; gate: AcceptGate; child: Child };

export async function startEmulator(latencyMs: number): Promise<Emulator> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startNode(
    'emulator',
    [cli, 'emulator'],
    { EMULATOR_PORT: String(port), EMULATOR_LATENCY_MS: String(latencyMs), LOG_LEVEL: 'warn' },
    root,
  );
  for (let i = 0; ; i++) {
    if ((await fetch(`${url}/__emulator/stats`).catch(() => null))?.ok) break;
    if (i > 300 || child.proc.exitCode !== null) throw new Error(`emulator did not start:\n${child.output.join('')}`);
    await sleep(100);
  }
  await json(`${url}/__emulator/settings`, { method: 'PUT', body: JSON.stringify({ enabled: false }) }); // no receipts
  return { url, gate: await startAcceptGate({ host: '127.0.0.1', port }), child };
}

export type StateCount = { status: string; code: string | null; n: number };

export type Stack = {
  label: string;
  apiUrl: string;
  /** /readyz of the accepting process and of the sending one (the same process when embedded). */
  readyUrls: { api: string; worker: string };
  /** One API key per customer (a pro plan's monthly quota is smaller than a long drill). */
  keys: string[];
  /** Every service process started, restarts included (for their logs). */
  processes: Child[];
  /** Messages claimed by a worker and not yet done (null where the database cannot be read alongside). */
  leased(): Promise<number | null>;
  restart(): Promise<void>;
  /** Final states of these messages by status and error code; may stop the service to read them. */
  states(ids: string[]): Promise<StateCount[]>;
  close(): Promise<void>;
  proxy?: FaultProxy;
  disk?: { fill(): number; free(): void };
};

const STATES_SQL = `SELECT status, error->>'code' AS code, count(*)::int AS n FROM messages
  WHERE id = ANY(string_to_array($1, ',')::uuid[]) GROUP BY 1, 2`;

/** api + worker processes on one port each; `start` runs them (api first: it runs the migrations). */
function serviceProcesses(roles: ('api' | 'worker' | 'all')[], env: Record<string, string>, ports: number[]) {
  const current: Child[] = [];
  const all: Child[] = [];
  return {
    current,
    all,
    async start() {
      current.length = 0;
      for (const [i, role] of roles.entries()) {
        const port: Record<string, string> =
          role === 'worker' ? { WORKER_STATUS_PORT: String(ports[i]) } : { PORT: String(ports[i]) };
        const child = startNode(role, [cli, 'serve', '--role', role], { ...env, ...port }, root);
        current.push(child);
        all.push(child);
        await waitHealthy(child, `http://127.0.0.1:${ports[i]}`);
      }
    },
    stop: () => Promise.all(current.map((c) => stop(c, 5000))),
  };
}

async function customers(apiUrl: string, emu: Emulator, count: number, mps: number) {
  const keys: string[] = [];
  for (let c = 0; c < count; c++) keys.push((await benchAccount(apiUrl, emu.url, mps)).key);
  return keys;
}

const common = (emu: Emulator) => ({
  ADMIN_TOKEN,
  ENCRYPTION_KEY,
  PROVIDER_BASE_URL: `http://127.0.0.1:${emu.gate.port}`,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  // The load stands for many customers but comes from one address with up to 1,000 requests open:
  // the per-address limit (decision 0062) would close most of them, which is not the fault drilled.
  MAX_CONNECTIONS_PER_ADDRESS: '0',
});

export async function startPostgresStack(opts: {
  adminUrl: string;
  emu: Emulator;
  customers: number;
  accountMps: number;
}): Promise<Stack> {
  const db = await createDatabase('postgres', opts.adminUrl);
  const dbUrl = db.env.DATABASE_URL!;
  const direct = postgres(dbUrl, { max: 2, onnotice: () => {} });
  const target = new URL(dbUrl);
  const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const ports = [await freePort(), await freePort()];
  const service = serviceProcesses(['api', 'worker'], { ...common(opts.emu), DATABASE_URL: proxy.via(dbUrl) }, ports);
  const close = async () => {
    await service.stop();
    await proxy.close().catch(() => {});
    await direct.end({ timeout: 1 }).catch(() => {});
    await db.drop().catch(() => {});
  };
  try {
    await service.start();
    const apiUrl = `http://127.0.0.1:${ports[0]}`;
    return {
      label: 'PostgreSQL through the fault proxy: serve --role api + serve --role worker',
      apiUrl,
      readyUrls: { api: apiUrl, worker: `http://127.0.0.1:${ports[1]}` },
      keys: await customers(apiUrl, opts.emu, opts.customers, opts.accountMps),
      processes: service.all,
      leased: async () =>
        (
          await direct<{ n: number }[]>`SELECT count(*)::int AS n FROM messages
            WHERE status IN ('pending', 'queued') AND locked_until > now()`
        )[0]!.n,
      restart: async () => {
        await service.stop();
        await service.start();
      },
      states: async (ids) => direct.unsafe<StateCount[]>(STATES_SQL, [ids.join(',')]),
      close,
      proxy,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The embedded database on a tmpfs of `sizeMb`; must run as root inside a private mount namespace. */
export async function startEmbeddedStack(opts: {
  emu: Emulator;
  customers: number;
  accountMps: number;
  sizeMb: number;
}): Promise<Stack> {
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-drill-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${opts.sizeMb}m`, 'tmpfs', mount]);
  const dataDir = path.join(mount, 'data');
  const filler = path.join(mount, 'filler');
  const ports = [await freePort()];
  const service = serviceProcesses(['all'], { ...common(opts.emu), DATA_DIR: dataDir }, ports);
  const close = async () => {
    await service.stop();
    try {
      execFileSync('umount', [mount]);
      fs.rmdirSync(mount);
    } catch {
      /* already gone */
    }
  };
  try {
    await service.start();
    const apiUrl = `http://127.0.0.1:${ports[0]}`;
    return {
      label: `embedded (PGlite), DATA_DIR on a ${opts.sizeMb} MB tmpfs: serve (all roles)`,
      apiUrl,
      readyUrls: { api: apiUrl, worker: apiUrl },
      keys: await customers(apiUrl, opts.emu, opts.customers, opts.accountMps),
      processes: service.all,
      leased: async () => null,
      restart: async () => {
        await service.stop();
        await service.start();
      },
      async states(ids) {
        await service.stop(); // one process at a time on an embedded database
        const pg = await PGlite.create(path.join(dataDir, 'pgdata'));
        try {
          return (await pg.query<StateCount>(STATES_SQL, [ids.join(',')])).rows;
        } finally {
          await pg.close();
        }
      },
      close,
      disk: {
        /** Writes the filesystem full; answers the bytes written. */
        fill() {
          const fd = fs.openSync(filler, 'a');
          let written = 0;
          for (const size of [1 << 20, 1 << 12]) {
            const chunk = Buffer.alloc(size, 1);
            try {
              for (;;) written += fs.writeSync(fd, chunk);
            } catch {
              /* ENOSPC: full at this chunk size; the smaller one takes the rest */
            }
          }
          fs.closeSync(fd);
          return written;
        },
        free: () => fs.rmSync(filler, { force: true }),
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Polls `url`/readyz every 500 ms (2 s timeout: a probe that hangs is not ready). */
export function pollReady(url: string, samples: { t: number; status: number | 'timeout' | 'error' }[]) {
  let running = true;
  const done = (async () => {
    while (running) {
      const t = Date.now();
      let status: number | 'timeout' | 'error';
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
export function logCounts(child: Child, from: number, to: number): Record<string, number> {
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
