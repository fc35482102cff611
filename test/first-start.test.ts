// Usable on the first start (issue #36, decision 0065): `chatgate serve` on a new data folder with
// the embedded database and no ADMIN_TOKEN makes an operator token, keeps it in
// DATA_DIR/admin-token (0600) and prints it once with how to use it and where /docs and /portal
// are; a later start prints where the file is, never the token; ADMIN_TOKEN set still wins. `GET /`
// sends a browser to the portal and tells a JSON client where things are. Real processes on the
// embedded database only (with a DATABASE_URL there is no data folder and nothing is made).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { backend, eventually } from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';

const run = promisify(execFile);

// Three starts, the first on a new data folder (initdb): more than vitest's 60 s on a busy machine.
const STARTS_TIMEOUT_MS = 300_000;
const EXPLICIT_TOKEN = 'first-start-explicit-token-0123456789';

describe.skipIf(backend === 'postgres')('the first start on a new data folder', () => {
  let dataDir: string;
  const running: ChatgateProcess[] = [];

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-first-start-'));
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** `chatgate serve` until it listens: its address, its stderr so far (and to come), and its stop. */
  async function serve(label: string, extra: Record<string, string> = {}) {
    const p = spawnChatgate(
      ['serve'],
      { DATABASE_URL: '', DATA_DIR: dataDir, ADMIN_TOKEN: '', PORT: '0', HOST: '127.0.0.1', ...extra },
      label,
    );
    running.push(p);
    const err = { text: '' };
    p.child.stderr!.on('data', (chunk: Buffer) => (err.text += chunk.toString('utf8')));
    const listening = await p.waitForLine((l) => l.msg === 'chatgate listening', 120_000);
    return {
      url: listening.address as string,
      listening,
      err,
      p,
      /** Stops it (SIGTERM) and waits for its exit: all it printed is in `err` then. */
      async stop() {
        p.child.kill('SIGTERM');
        expect((await p.exited).code).toBe(0);
      },
    };
  }
  const customers = (url: string, token: string) =>
    fetch(`${url}/admin/customers`, { headers: { authorization: `Bearer ${token}` } });
  const tokenFile = () => path.join(dataDir, 'admin-token');
  const admin = (url: string, ...args: string[]) =>
    run(process.execPath, chatgateArgs('admin', ...args), {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_TOKEN: '', CHATGATE_URL: url },
    });

  it(
    'makes a token, keeps it 0600, prints it once with /docs and /portal; later starts say where it is; ADMIN_TOKEN wins',
    async () => {
      const first = await serve('first-start-1');
      // The help comes right after the listening line: wait for its last line.
      await eventually(async () => /Customer portal: /.test(first.err.text), 30_000);
      const token = fs.readFileSync(tokenFile(), 'utf8').trim();
      expect(token).toMatch(/^[0-9a-f]{48}$/);
      expect(fs.statSync(tokenFile()).mode & 0o777).toBe(0o600);
      expect(first.err.text).toContain(token);
      expect(first.err.text).toContain(tokenFile());
      expect(first.err.text).toContain(`${first.url}/docs`);
      expect(first.err.text).toContain(`${first.url}/portal`);
      expect(first.err.text).toContain(
        `curl -H "Authorization: Bearer $(cat ${tokenFile()})" ${first.url}/admin/customers`,
      );
      // The log line names /docs and /portal too; the log never holds the token.
      expect(first.listening).toMatchObject({ docs: `${first.url}/docs`, portal: `${first.url}/portal` });
      expect(JSON.stringify(first.p.lines)).not.toContain(token);
      // The token works against the operator API; another does not.
      expect((await customers(first.url, token)).status).toBe(200);
      expect((await customers(first.url, 'not-the-token-0123456789')).status).toBe(401);
      await first.stop();
      expect(first.err.text.split(token)).toHaveLength(2); // printed exactly once

      const second = await serve('first-start-2');
      expect((await customers(second.url, token)).status).toBe(200);
      // `chatgate admin` with no ADMIN_TOKEN uses the data folder's token too.
      const made = await admin(second.url, 'customers', 'create', '--name', 'First', '--plan', 'pro', '--quiet');
      expect(made.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
      expect((await admin(second.url, 'customers', 'list', '--json')).stdout).toContain(made.stdout.trim());
      await second.stop();
      expect(second.err.text).toContain(`the operator token is in ${tokenFile()}`);
      expect(second.err.text).not.toContain(token);
      expect(JSON.stringify(second.p.lines)).not.toContain(token);

      const explicit = await serve('first-start-3', { ADMIN_TOKEN: EXPLICIT_TOKEN });
      expect((await customers(explicit.url, EXPLICIT_TOKEN)).status).toBe(200);
      expect((await customers(explicit.url, token)).status).toBe(401);
      await explicit.stop();
      expect(explicit.err.text).not.toContain('operator token');
      expect(fs.readFileSync(tokenFile(), 'utf8').trim()).toBe(token); // left as it was
    },
    STARTS_TIMEOUT_MS,
  );

  it(
    'GET / sends a browser to the portal and tells a JSON client where the reference, the document and the portal are',
    async () => {
      const svc = await serve('first-start-root', { ADMIN_TOKEN: EXPLICIT_TOKEN });
      try {
        const browser = await fetch(`${svc.url}/`, {
          headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
          redirect: 'manual',
        });
        expect(browser.status).toBe(302);
        expect(browser.headers.get('location')).toBe('/portal');
        const client = await fetch(`${svc.url}/`, { headers: { accept: 'application/json' } });
        expect(client.status).toBe(200);
        expect(await client.json()).toEqual({
          service: 'chatgate',
          docs: '/docs',
          openapi: '/openapi.json',
          portal: '/portal',
          health: '/healthz',
        });
        // Where it leads answers: the portal's sign-in for a browser, the reference.
        const portal = await fetch(`${svc.url}/portal`, { headers: { accept: 'text/html' }, redirect: 'follow' });
        expect(portal.status).toBe(200);
        expect((await fetch(`${svc.url}/docs`, { redirect: 'follow' })).status).toBe(200);
      } finally {
        await svc.stop();
      }
    },
    STARTS_TIMEOUT_MS,
  );
});
