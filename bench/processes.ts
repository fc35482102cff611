// Child processes of the bench: servers and the load generator each get their own process (and
// event loop), so the load generator never steals the server's loop and RSS is per server.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

/** output: stdout and stderr interleaved (the server's log); stdout: stdout alone (the load result). */
export type Child = {
  name: string;
  proc: ChildProcess;
  pid: number;
  output: string[];
  stdout: string[];
  exited: Promise<number | null>;
};

const live = new Set<Child>();

/** Runs a TypeScript file with node --import tsx (not npx, whose pid would not be the server's). */
export function startTs(name: string, file: string, env: Record<string, string>, nodeArgs: string[] = []): Child {
  return startNode(name, [...nodeArgs, '--import', 'tsx', file], env);
}

/** Runs node with these arguments (e.g. the built `dist/src/cli.js serve`, as `npm start` does). */
export function startNode(name: string, args: string[], env: Record<string, string>, cwd?: string): Child {
  const proc = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  const output: string[] = [];
  const stdout: string[] = [];
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
    output.push(s);
    stdout.push(s);
  });
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => output.push(s));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const child: Child = { name, proc, pid: proc.pid!, output, stdout, exited };
  live.add(child);
  void exited.then(() => live.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL if it has not exited in time. Only ever signals our own children by pid. */
export async function stop(child: Child, graceMs = 10_000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => stop(c, 3000)));
}

/** A free loopback port (the tiny race until the server binds it is acceptable for a bench). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function waitHealthy(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited early:\n${child.output.join('')}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} not healthy after ${timeoutMs} ms:\n${child.output.join('')}`);
}

/** Current and peak resident set size of a process, in MB, from /proc (Linux). */
export function memoryMb(pid: number): { rssMb: number | null; peakRssMb: number | null } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => {
      const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Math.round(Number(m[1]) / 102.4) / 10 : null;
    };
    return { rssMb: kb('VmRSS'), peakRssMb: kb('VmHWM') };
  } catch {
    return { rssMb: null, peakRssMb: null };
  }
}

/** Samples the resident set size of processes every `everyMs`; `peak()` is the largest seen since `reset()`. */
export function rssSampler(pids: () => number[], everyMs = 250) {
  const peaks = new Map<number, number>();
  const sample = () => {
    for (const pid of pids()) {
      const mb = memoryMb(pid).rssMb;
      if (mb !== null && mb > (peaks.get(pid) ?? 0)) peaks.set(pid, mb);
    }
  };
  const timer = setInterval(sample, everyMs);
  return {
    reset: () => peaks.clear(),
    peak: (pid: number) => (sample(), peaks.get(pid) ?? null),
    stop: () => clearInterval(timer),
  };
}

/** Milliseconds per clock tick of /proc/<pid>/stat's times (CLK_TCK, 100 on most Linux systems). */
const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  } catch {
    return 10;
  }
})();

/** A process's command name and the fields of /proc/<pid>/stat after it (f[0] is field 3, state). */
function statOf(pid: number | string): { name: string; f: string[] } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
  const close = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, close), f: stat.slice(close + 2).split(' ') };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (Linux). */
export function cpuMs(pid: number): number | null {
  try {
    const { f } = statOf(pid);
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // fields 14 and 15: utime, stime
  } catch {
    return null;
  }
}

/**
 * CPU time used so far by the local PostgreSQL server, in ms: every live `postgres` process plus
 * what the postmaster has collected from its exited children (cutime, cstime). Its difference over
 * a phase is the server's CPU for the phase (all databases: run the bench on a quiet server).
 */
export function postgresCpuMs(): number | null {
  let total = 0;
  let found = false;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { name, f } = statOf(entry);
      if (name !== 'postgres') continue;
      // Its parent (field 4) not postgres: the postmaster, whose reaped children's time counts too.
      const isPostmaster = statOf(f[1]!).name !== 'postgres';
      total += (Number(f[11]) + Number(f[12]) + (isPostmaster ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
      found = true;
    } catch {
      /* exited meanwhile */
    }
  }
  return found ? total : null;
}
