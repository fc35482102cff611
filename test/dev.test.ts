// `chatgate dev --emulator` as a newcomer runs it: the service and the emulator start, `dev env`
// waits for them and gives the export lines, a sandbox key reaches `read` and a live key goes out
// through the emulator; a second run reuses the same customer, account and keys.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { backend, call, eventually } from './support/harness.js';
import { type ChatgateProcess, spawnChatgate } from './support/processes.js';

const run = promisify(execFile);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-dev-'));
const running: ChatgateProcess[] = [];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// The embedded database in a fresh data folder, whatever backend the suite runs on.
const env = (extra: Record<string, string> = {}) => ({ DATA_DIR: dataDir, DATABASE_URL: '', ...extra });

/** `chatgate dev env`: the export lines as variables. */
async function devEnv(wait = '120') {
  const { stdout } = await run(process.execPath, chatgateArgs('dev', 'env', '--wait', wait), {
    env: { ...process.env, ...env() },
  });
  return Object.fromEntries([...stdout.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

afterAll(async () => {
  for (const p of running) {
    p.child.kill('SIGTERM');
    await p.exited;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// It runs on its own embedded database whatever the suite's backend: once per CI run (the PGlite one) is enough.
describe.skipIf(backend === 'postgres')('chatgate dev', () => {
  it('says at once that no `chatgate dev` is running', async () => {
    const r = await run(process.execPath, chatgateArgs('dev', 'env', '--wait', '0'), {
      env: { ...process.env, ...env() },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(r).toMatchObject({ code: 2 });
    expect((r as { stderr: string }).stderr).toMatch(/^chatgate dev env: no running `chatgate dev` answered/);
  });

  it('starts the service and the emulator, sets up a customer, an account and keys, and reuses them', async () => {
    const ports = { PORT: String(await freePort()), EMULATOR_PORT: String(await freePort()) };
    const first = spawnChatgate(['dev', '--emulator'], env(ports), 'dev-first');
    running.push(first);
    const vars = await devEnv();
    expect(vars).toMatchObject({
      CHATGATE_URL: `http://127.0.0.1:${ports.PORT}`,
      CHATGATE_API_KEY: expect.stringMatching(/^ak_test_/),
      CHATGATE_LIVE_API_KEY: expect.stringMatching(/^ak_live_/),
    });
    const url = vars.CHATGATE_URL!;
    const send = (key: string, externalId: string, phone: string) =>
      call(url, 'POST', '/messages', {
        key,
        body: { externalId, to: { type: 'phone', phoneE164: phone }, content: { type: 'text', text: 'Hello' } },
      });
    const status = (key: string, id: string, want: string) =>
      eventually(async () => (await call(url, 'GET', `/messages/${id}`, { key })).body.status === want, 30_000);
    expect((await send(vars.CHATGATE_API_KEY!, 'order-1', '+15551234588')).status).toBe(201);
    expect((await send(vars.CHATGATE_LIVE_API_KEY!, 'live-1', '+15551234567')).status).toBe(201);
    await status(vars.CHATGATE_API_KEY!, 'order-1', 'read');
    await status(vars.CHATGATE_LIVE_API_KEY!, 'live-1', 'delivered');
    const admin = await call(url, 'GET', `/admin/customers/${vars.CHATGATE_CUSTOMER_ID}/chat-accounts`, {
      headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` },
    });
    expect(admin.body.chatAccounts).toMatchObject([{ id: vars.CHATGATE_ACCOUNT_ID, status: 'CONNECTED' }]);
    expect(fs.statSync(path.join(dataDir, 'dev.json')).mode & 0o777).toBe(0o600);

    first.child.kill('SIGTERM');
    expect(await first.exited).toMatchObject({ code: 0 });
    const second = spawnChatgate(['dev', '--emulator'], env(ports), 'dev-second');
    running.push(second);
    expect(await devEnv()).toEqual(vars);
  }, 240_000);
});
