// The `chatgate` program itself, run as a person runs it: help on every command without side
// effects, --version, and one clear line (exit 2, no stack trace) for a bad command line.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { backend } from './support/harness.js';

const run = promisify(execFile);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-cli-'));

/** Runs `chatgate ...` (src/, transpiled once per run); a command that starts something instead of answering is killed after 90 s. */
async function chatgate(...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, chatgateArgs(...args), {
      // Nothing to talk to and an empty data folder: a command that does more than print help shows it.
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', ADMIN_TOKEN: '', PORT: '1', EMULATOR_PORT: '0' },
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: e.code ?? e.signal, stdout: e.stdout, stderr: e.stderr };
  }
}

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// No database is touched: once per CI run (the PGlite one) is enough.
describe.skipIf(backend === 'postgres')('chatgate --help, help and --version', () => {
  const commands = [
    ['serve'],
    ['migrate'],
    ['emulator'],
    ['admin'],
    ['admin', 'customers', 'create'],
    ['admin', 'accounts', 'update', 'some-id'],
    ['admin', 'keys', 'list'],
    ['admin', 'usage'],
    ['admin', 'users', 'reset-password'],
  ];

  it.each(commands)(
    '%s … --help prints its help and does nothing else',
    async (...words) => {
      for (const flag of ['--help', '-h']) {
        const r = await chatgate(...words, flag);
        expect(r, `${words.join(' ')} ${flag}`).toMatchObject({ code: 0, stderr: '' });
        const usage = r.stdout.split('\n')[0]!;
        expect(usage).toMatch(/^usage: chatgate /);
        if (words.length > 1 && words[0] === 'admin') expect(usage).toContain(`chatgate admin ${words[1]}`);
        else if (words[0] !== 'admin') expect(usage).toContain(`chatgate ${words[0]}`);
      }
      // Nothing was created: migrate and serve would have made the embedded database here.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    },
    120_000,
  );

  it('chatgate help COMMAND is the same help; help and no command list every command', async () => {
    const [help, flag, adminHelp, adminFlag, ...lists] = await Promise.all([
      chatgate('help', 'emulator'),
      chatgate('emulator', '--help'),
      chatgate('help', 'admin', 'keys', 'create'),
      chatgate('admin', 'keys', 'create', '--help'),
      chatgate('help'),
      chatgate('--help'),
      chatgate(),
    ]);
    expect(help.stdout).toBe(flag.stdout);
    expect(adminHelp.stdout).toBe(adminFlag.stdout);
    for (const r of lists) {
      expect(r.code).toBe(0);
      for (const c of [
        'serve',
        'migrate',
        'emulator',
        'admin',
        'send',
        'messages',
        'listen',
        'dev',
        'help',
        '--version',
      ])
        expect(r.stdout).toContain(c);
    }
  }, 120_000);

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };
    expect(await chatgate('--version')).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('runs from source with tsx, as the README runs it (`npx tsx src/cli.ts …`)', async () => {
    // The other tests run src/ as the test run transpiled it once (test/support/cli-build.ts).
    const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--version']);
    expect(stdout).toBe(`${version}\n`);
    const bad = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'frobnicate']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/^chatgate: unknown command "frobnicate"/) });
  });
});

describe.skipIf(backend === 'postgres')('a bad command line', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /^chatgate: unknown command "frobnicate"/],
    [['help', 'frobnicate'], /unknown command "frobnicate"/],
    [['serve', '--rolle', 'api'], /^chatgate serve: unknown option --rolle \(usage: chatgate serve \[--role/],
    [['serve', '--role'], /^chatgate serve: option --role needs a value \(usage: chatgate serve/],
    [['migrate', 'now'], /^chatgate migrate: unexpected argument now \(usage: chatgate migrate\)/],
    [['emulator', '--port', '1'], /^chatgate emulator: unknown option --port/],
    [['admin', 'keys', 'frobnicate'], /^chatgate admin: unknown command "keys frobnicate" \(usage: chatgate admin/],
    [['admin', 'keys'], /^chatgate admin keys: missing command \(create\|list\|revoke\)/],
    [
      ['admin', 'keys', 'create'],
      /^chatgate admin keys create: CUSTOMER_ID is missing \(usage: chatgate admin keys create/,
    ],
    [['admin', 'keys', 'create', 'c', '--sandbx'], /^chatgate admin keys create: unknown option --sandbx \(usage: /],
    [['admin', 'customers', 'create', '--name'], /^chatgate admin customers create: option --name needs a value/],
    [['admin', 'keys', 'create', 'c', '--sandbox=yes'], /^chatgate admin keys create: option --sandbox takes no value/],
    [['admin', 'customers', 'list', '--type', 'DIRECT'], /^chatgate admin customers list: unknown option --type/],
    [['admin', 'keys', 'revoke', 'a', 'b'], /^chatgate admin keys revoke: unexpected argument b/],
  ];

  it.each(cases)(
    '%j: one line naming it and the usage, exit 2',
    async (args, message) => {
      const r = await chatgate(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1); // no stack trace
    },
    120_000,
  );
});
