// The README's "Try it" followed as written: its first step (`npm start`) is the service as a real
// process on a new data folder (the built program, on a free port), the shell blocks after it run
// in bash as they are, with the operator token the first start made, up to a message at `read`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { backend } from './support/harness.js';

const run = promisify(execFile);
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-readme-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The sh blocks of the README's "Try it" section, in order. */
function tryItBlocks(readme: string): string[] {
  const section = /^## Try it\n([\s\S]*?)^## /m.exec(readme)![1]!;
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

// The README runs the embedded service whatever the suite's backend: once per CI run is enough.
it.skipIf(backend === 'postgres')(
  "reaches `read` following the README's Try it, with the token of the first start",
  async () => {
    const readme = fs.readFileSync('README.md', 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const [start, ...rest] = tryItBlocks(readme);
    expect(start!.trim()).toBe('npm start');
    expect(rest).toHaveLength(2);
    const port = await freePort();
    const serve = [process.execPath, ...chatgateArgs('serve')].map((a) => `'${a}'`).join(' ');
    const script = [
      'set -euo pipefail',
      // `npm start` is the built program's `serve` (the suite built it once); stopped at the end.
      `${serve} > serve.log 2>&1 &`,
      "trap 'kill %1 2>/dev/null || true; wait' EXIT",
      `until curl -sf http://127.0.0.1:${port}/readyz >/dev/null; do sleep 0.5; done`,
      ...rest.map((block) => block.replaceAll('http://127.0.0.1:3000', `http://127.0.0.1:${port}`)),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: home,
      env: {
        ...process.env,
        HOME: home,
        DATA_DIR: path.join(home, 'data'),
        DATABASE_URL: '',
        ADMIN_TOKEN: '',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      timeout: 240_000,
    });
    expect(stdout).toMatch(/^CONNECTED$/m);
    expect(stdout).toMatch(/^http\S+\/portal\S*$/m); // the invitation link
    expect(stdout).toMatch(/^pending$/m);
    expect(stdout.trim().split('\n').at(-1)).toBe('read');
    // The token came from the first start, which printed it once.
    const token = fs.readFileSync(path.join(home, 'data', 'admin-token'), 'utf8').trim();
    expect(fs.readFileSync(path.join(home, 'serve.log'), 'utf8').split(token)).toHaveLength(2);
  },
  300_000,
);
