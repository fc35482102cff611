// docs/quickstart.md followed as written: its shell steps run in bash (the repository's `npm ci`
// is the one this suite already ran), each example file is written from the page and run with the
// command its first line gives, in a new project under an empty home folder, up to a `read` event.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, expect, it } from 'vitest';

import { backend, call, createKey, startService } from './support/harness.js';

const run = promisify(execFile);
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-quickstart-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The page as one bash script: the sh blocks as they are, each ts block written to its file and run. */
function scriptOf(page: string): string {
  const blocks = [...page.matchAll(/```(sh|ts)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));
  const parts = blocks.map(({ lang, code }) => {
    if (lang === 'sh') return code;
    const head = /^\/\/ (\S+\.ts) — run with: (.+)$/m.exec(code.split('\n')[0]!);
    if (!head) return ''; // a fragment, not a file to run
    return `cat > ${head[1]} <<'QUICKSTART_EOF'\n${code}QUICKSTART_EOF\n${head[2]}\n`;
  });
  expect(parts.filter((p) => /<<'QUICKSTART_EOF'/.test(p))).toHaveLength(2);
  return parts.join('\n');
}

// The page runs its own embedded service whatever the suite's backend: once per CI run (the PGlite one) is enough.
it.skipIf(backend === 'postgres')(
  'reaches a read event from a new folder, following docs/quickstart.md word for word',
  async () => {
    const script = [
      'set -euo pipefail',
      // The repository is installed already: this suite runs from it.
      'npm() { if [ "$1" = ci ]; then return 0; fi; command npm "$@"; }',
      // The page's background `npx tsx src/cli.ts dev` is npx → tsx → node: job control gives it a
      // process group of its own, and the whole group is stopped at the end (killing npx alone
      // left the service running after the test, holding a CPU share and 350 MB).
      'set -m',
      "trap 'kill -- -$(jobs -p %1) 2>/dev/null || true; wait' EXIT",
      scriptOf(fs.readFileSync('docs/quickstart.md', 'utf8')),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: process.cwd(),
      env: {
        ...process.env,
        HOME: home,
        DATA_DIR: path.join(home, 'chatgate-data'),
        DATABASE_URL: '',
        PORT: String(await freePort()),
        RECEIVER_PORT: String(await freePort()),
        npm_config_cache: path.join(home, '.npm'),
      },
      timeout: 280_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(stdout).toMatch(/^queued [0-9a-f-]{36}$/m); // first-message.ts
    expect(stdout).toMatch(/^read$/m);
    expect(stdout).toMatch(/^events-\d+ read$/m); // receive-events.ts: the read event, signature checked
    expect(fs.existsSync(path.join(home, 'first-message/package.json'))).toBe(true);
  },
  300_000,
);

it('a local receiver refused without the local-development switch is told the switch', async () => {
  const svc = await startService({ role: 'api' }); // UNSAFE_ALLOW_PRIVATE_URLS unset
  try {
    const customer = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Q', plan: 'pro' } });
    const key = await createKey(svc.url, customer.body.id, {});
    const hook = (url: string) => call(svc.url, 'POST', '/webhook-endpoints', { key, body: { url } });
    for (const url of ['http://127.0.0.1:8080/chatgate', 'https://localhost/chatgate']) {
      const res = await hook(url);
      expect(res.status, url).toBe(400);
      expect(res.body.reason, url).toMatch(/start the service with UNSAFE_ALLOW_PRIVATE_URLS=true/);
    }
    // The switch would not help these: no hint.
    expect((await hook('ftp://files.example.com/hook')).body.reason).not.toMatch(/UNSAFE/);
    expect((await hook('http://hooks.example.com/hook')).body.reason).toMatch(/UNSAFE/);
  } finally {
    await svc.stop();
  }
}, 120_000);
