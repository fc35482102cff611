// scripts/preflight.mjs (npm start's and npm test's pre-script): the one line on a too-old Node,
// and the build-inputs hash that lets npm start skip tsc when nothing changed.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { expect, it } from 'vitest';

// @ts-expect-error: a plain .mjs script, no declarations
import { buildInputsHash, runtimeProblem } from '../scripts/preflight.mjs';

const run = promisify(execFile);

it('names the Node.js needed and the one command that brings it, for a node older than 22.19', () => {
  for (const old of ['20.20.2', '22.18.0', '18.0.0'])
    expect(runtimeProblem(old)).toMatch(
      /^Node\.js 22\.19 or later is needed \(this is [\d.]+, .*\); fix: npm rebuild node/,
    );
  for (const ok of ['22.19.0', '23.0.0', '24.21.0']) expect(runtimeProblem(ok)).toBeNull();
});

it('fails in one line before any build when run by an old node (the machine has one at /usr/bin/node)', async () => {
  const old = '/usr/bin/node';
  const version = fs.existsSync(old) ? (await run(old, ['--version'])).stdout.trim() : 'v99';
  if (runtimeProblem(version.slice(1)) === null) return; // this machine's node is recent: nothing to show
  const r = await run(old, ['scripts/preflight.mjs', 'start']).catch((e: { code: number; stderr: string }) => e);
  expect(r).toMatchObject({ code: 1 });
  const lines = (r as { stderr: string }).stderr.trimEnd().split('\n');
  expect(lines).toEqual([
    expect.stringMatching(/^chatgate: Node\.js 22\.19 or later is needed .* fix: npm rebuild node/),
  ]);
});

it('changes the build-inputs hash when a source changes, not when a file is only touched', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-preflight-'));
  try {
    fs.mkdirSync(path.join(root, 'src'));
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 1;\n');
    fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}');
    const first = buildInputsHash(root);
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(path.join(root, 'src/a.ts'), later, later);
    expect(buildInputsHash(root)).toBe(first);
    fs.writeFileSync(path.join(root, 'src/a.test.ts'), 'tests are not built');
    expect(buildInputsHash(root)).toBe(first);
    fs.writeFileSync(path.join(root, 'src/a.ts'), 'export const a = 2;\n');
    expect(buildInputsHash(root)).not.toBe(first);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
