// The embedded database's folder (DATA_DIR) with real `chatgate` processes: what a run leaves
// there is private to the service's user (files 0600, folders 0700), wider modes found at start
// are narrowed (and logged), and a second process on the same folder (`serve`, `migrate`, a
// worker) is refused at once with one clear line while the first holds it; a holder killed
// without releasing its lock does not block the next start. Embedded database only (with a
// DATABASE_URL there is no data folder).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN_TOKEN, call } from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';

/** Every entry under dir whose mode lets group or others in, as "relative path mode". */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const visit = (p: string) => {
    const st = fs.lstatSync(p);
    if ((st.mode & 0o077) !== 0) found.push(`${path.relative(dir, p) || '.'} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
  };
  visit(dir);
  return found;
}

// Each test starts `chatgate` up to four times (the first on a new data folder runs initdb) and
// waits up to 120 s for one to listen: on a busy 2-core machine that is more than vitest's 60 s.
const STARTS_TIMEOUT_MS = 300_000;

describe('embedded data folder: modes and one process at a time', () => {
  let dataDir: string;
  let umask: number;
  const running: ChatgateProcess[] = [];
  const env = (extra: Record<string, string> = {}) => ({
    DATABASE_URL: '',
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    PORT: '0',
    HOST: '127.0.0.1',
    ...extra,
  });
  const start = (args: string[], label: string, extra: Record<string, string> = {}) => {
    const p = spawnChatgate(args, env(extra), label);
    running.push(p);
    return p;
  };
  /** What a process wrote on stderr, once it has exited. */
  const stderrOf = (p: ChatgateProcess) => {
    let text = '';
    p.child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    return p.exited.then((exit) => ({ ...exit, stderr: text }));
  };
  const listening = async (p: ChatgateProcess) =>
    (await p.waitForLine((l) => l.msg === 'chatgate listening', 120_000)).address as string;

  beforeAll(() => {
    // Children inherit a umask that lets everyone read and write, as on a host with a careless
    // profile: the service must not depend on the umask it is given.
    umask = process.umask(0);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-datadir-'));
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.umask(umask);
  });

  it(
    'a run leaves only owner-only files; a second serve, migrate or worker is refused while the first runs',
    async () => {
      const first = start(['serve'], 'datadir-first');
      const url = await listening(first);
      // Write something (a customer, an account with a sealed token) so the WAL has content.
      const customer = await call(url, 'POST', '/admin/customers', {
        admin: true,
        body: { name: 'Modes', plan: 'pro' },
      });
      expect(customer.status).toBe(201);

      expect(openToOthers(dataDir)).toEqual([]);
      const lock = fs.readFileSync(path.join(dataDir, 'chatgate.lock'), 'utf8').trim();
      expect(lock).toBe(String(first.child.pid));

      for (const [args, label] of [
        [['serve'], 'datadir-second-serve'],
        [['migrate'], 'datadir-migrate'],
        [['serve', '--role', 'worker'], 'datadir-worker'],
      ] as const) {
        const second = start([...args], label);
        const { code, stderr } = await stderrOf(second);
        expect(code, label).toBe(1);
        const lines = stderr.trim().split('\n');
        expect(lines, label).toHaveLength(1);
        expect(lines[0]).toContain(
          `DATA_DIR ${dataDir} is in use by another chatgate process (pid ${first.child.pid})`,
        );
        expect(second.lines.some((l) => l.msg === 'chatgate listening')).toBe(false);
      }
      // The first is untouched by the refused starts.
      expect((await call(url, 'GET', '/healthz')).status).toBe(200);

      first.child.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'chatgate.lock'))).toBe(false);
    },
    STARTS_TIMEOUT_MS,
  );

  it(
    'modes widened while stopped are narrowed at start and logged; a killed holder does not block the next start',
    async () => {
      // What an older version (or a copy with `cp -r` under umask 022) left behind.
      const widened: string[] = [];
      const visit = (p: string) => {
        const st = fs.statSync(p);
        fs.chmodSync(p, st.isDirectory() ? 0o777 : 0o666);
        widened.push(p);
        if (st.isDirectory()) for (const name of fs.readdirSync(p)) visit(path.join(p, name));
      };
      visit(dataDir);
      expect(openToOthers(dataDir).length).toBeGreaterThan(10);
      // A lock left by a process that is gone.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      fs.writeFileSync(path.join(dataDir, 'chatgate.lock'), `${gone.stdout}\n`);

      const again = start(['serve'], 'datadir-again');
      await listening(again);
      const fixed = again.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('DATA_DIR held files'));
      expect(fixed?.fixed).toBeGreaterThan(widened.length / 2);
      expect(openToOthers(dataDir)).toEqual([]);

      // Killed without a chance to release: its stale lock is taken over by the next start.
      again.child.kill('SIGKILL');
      await again.exited;
      expect(fs.readFileSync(path.join(dataDir, 'chatgate.lock'), 'utf8').trim()).toBe(String(again.child.pid));
      const third = start(['serve'], 'datadir-third');
      const url = await listening(third);
      expect((await call(url, 'GET', '/healthz')).status).toBe(200);
      third.child.kill('SIGTERM');
      expect((await third.exited).code).toBe(0);
      expect(openToOthers(dataDir)).toEqual([]);
    },
    STARTS_TIMEOUT_MS,
  );
});
