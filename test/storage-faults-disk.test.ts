// The embedded database's disk fills up: a real `chatgate serve` whose DATA_DIR is a small tmpfs in
// a private mount namespace of its own (`unshare --mount`), filled and freed from outside through
// that namespace (`nsenter --mount`). While it is full, every request that needs a write answers
// 503 database_unavailable (reason disk_full) with Retry-After, never 500; /readyz answers 503
// and the fault is counted and logged once; once space is freed, writes go through again and
// /readyz answers 200, with no restart. Needs root and util-linux (unshare, nsenter), as CI has;
// skipped with its reason otherwise, and on PostgreSQL (no data folder there).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import {
  ADMIN_TOKEN,
  backend,
  call,
  createTenant,
  ENCRYPTION_KEY,
  eventually,
  textMessage,
} from './support/harness.js';
import { parseSamples, sampleValue } from './support/prometheus-text.js';
import { logFile } from './support/test-logs.js';

/** The data folder's file system: the fresh database takes about 41 MB of it (16 MB of WAL). */
const TMPFS_MB = 64;
const FILLER = 'filler';

/** Why this machine cannot run the test (null: it can): a tmpfs mounted in a namespace of our own. */
function cannotRun(): string | null {
  if (backend !== 'pglite') return 'the embedded database only (DATABASE_URL is set)';
  if (process.getuid?.() !== 0) return 'needs root, to mount a tmpfs in a private mount namespace';
  for (const tool of ['unshare', 'nsenter'])
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} (util-linux) is not installed`;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-mount-probe-'));
  try {
    const r = spawnSync('unshare', [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      `mount -t tmpfs -o size=1M tmpfs "${probe}"`,
    ]);
    return r.status === 0
      ? null
      : `cannot mount a tmpfs in a private mount namespace here: ${r.stderr.toString().trim()}`;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

const skipReason = cannotRun();
if (skipReason) console.log(`test/storage-faults-disk.test.ts skipped: ${skipReason}`);

type Line = { msg?: string; level?: number; [k: string]: unknown };

describe.skipIf(skipReason !== null)('disk full on the embedded database (a tmpfs in a mount namespace)', () => {
  let dataDir: string;
  let child: ChildProcess;
  let exited: Promise<unknown>;
  const lines: Line[] = [];
  let url: string;

  /** Runs `script` in the service's mount namespace, where its tmpfs is mounted on dataDir. */
  const inNamespace = (script: string) =>
    spawnSync('nsenter', ['--target', String(child.pid), '--mount', 'sh', '-c', script, 'sh', dataDir]);

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-diskfull-'));
    // unshare execs sh, which execs node: the service's pid is the namespace's.
    child = spawn(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        `mount -t tmpfs -o size=${TMPFS_MB}M tmpfs "$DATA_DIR" && exec "$@"`,
        'sh',
        process.execPath,
        ...chatgateArgs('serve'),
      ],
      {
        env: {
          ...process.env,
          LOG_LEVEL: 'info',
          DATABASE_URL: '',
          DATA_DIR: dataDir,
          ADMIN_TOKEN,
          ENCRYPTION_KEY,
          PORT: '0',
          HOST: '127.0.0.1',
          WORKER_POLL_MS: '200',
          SANDBOX_STEP_MS: '50',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const out = fs.createWriteStream(logFile('disk-full'));
    child.stderr!.pipe(out, { end: false });
    readline.createInterface({ input: child.stdout! }).on('line', (text) => {
      out.write(`${text}\n`);
      try {
        lines.push(JSON.parse(text) as Line);
      } catch {
        lines.push({ msg: text });
      }
    });
    exited = new Promise((resolve) => child.once('exit', resolve)).finally(() => out.end());
    const listening = await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`chatgate exited (${child.exitCode}); see its log`);
      return lines.find((l) => l.msg === 'chatgate listening');
    }, 120_000);
    url = listening.address as string;
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    }
    // The tmpfs went with the namespace; only the empty mount point is left.
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 database_unavailable with Retry-After while the disk is full, never 500, and recovers without a restart', async () => {
    const tenant = await createTenant(url);
    // Not call(): the OpenAPI document does not list 503 database_unavailable yet (see the report of issue #32).
    const send = async (externalId: string) => {
      const res = await fetch(`${url}/messages`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.sandboxKey, 'content-type': 'application/json' },
        // Big texts fill the few free pages the tables have left sooner.
        body: JSON.stringify(textMessage(externalId, { content: { type: 'text', text: 'x'.repeat(4000) } })),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers };
    };
    expect((await send('before')).status).toBe(201);

    const filled = inNamespace(`head -c ${TMPFS_MB * 2}M /dev/zero > "$1/${FILLER}"; df -k "$1" | tail -1`);
    expect(filled.stdout.toString()).toMatch(/\s100%\s/);

    // Some sends may still fit in pages already allocated; then every one is refused.
    const answers: { status: number; body: Record<string, unknown>; retryAfter: string | null }[] = [];
    for (let i = 0; i < 2000 && answers.filter((a) => a.status === 503).length < 20; i++) {
      const r = await send(`full-${i}`);
      answers.push({ status: r.status, body: r.body, retryAfter: r.headers.get('retry-after') });
    }
    expect(answers.filter((a) => a.status !== 201 && a.status !== 503)).toEqual([]);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBe(20);
    for (const a of refused) {
      expect(a.body).toMatchObject({ error: 'database_unavailable', reason: 'disk_full' });
      expect(a.retryAfter).toBe('5');
    }

    const ready = await call(url, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error).toBe('database unavailable');
    expect(ready.body.reasons).toContainEqual(
      expect.objectContaining({ check: 'database_fault', reason: 'disk_full' }),
    );
    const samples = parseSamples(await (await fetch(`${url}/metrics`)).text());
    expect(sampleValue(samples, 'chatgate_database_faults_total', { reason: 'disk_full' })).toBeGreaterThanOrEqual(20);
    // Logged once (per minute), not once per refused request.
    expect(lines.filter((l) => String(l.msg).startsWith('database fault (disk_full)'))).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);

    const freed = inNamespace(`rm "$1/${FILLER}"`);
    expect(freed.status).toBe(0);
    let afterId = '';
    const after = await eventually(async () => {
      afterId = `after-${Date.now()}`;
      const r = await send(afterId);
      expect([201, 503]).toContain(r.status);
      return r.status === 201 ? r : undefined;
    }, 30_000);
    expect(after.status).toBe(201);
    // Written and then moved on by the worker (sandbox steps), in the same process.
    await eventually(async () => {
      const m = await call(url, 'GET', `/messages/${afterId}`, { key: tenant.sandboxKey });
      return m.body.status === 'delivered';
    }, 30_000);
    await eventually(async () => (await call(url, 'GET', '/readyz')).status === 200, 30_000);
    expect(child.exitCode).toBeNull();
  });
});
