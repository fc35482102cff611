// @chatgate/client as a user gets it: its types reject what the service refuses (tsc on
// test/fixtures/client-types.ts, whose @ts-expect-error lines must each be a real error), and
// `npm pack` gives a package that installs with no dependency and loads with import and require,
// types included.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EVENT_TYPES } from '../src/shared/vocab.js';

const root = path.resolve(import.meta.dirname, '..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const fixture = path.join(root, 'test/fixtures/client-types.ts');

/** tsc --noEmit on `files` with a strict NodeNext config; the compiler's output when it fails. */
function typecheck(dir: string, files: string[], nodeTypes = false): string {
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: nodeTypes ? ['node'] : [],
        typeRoots: [path.join(root, 'node_modules/@types')],
      },
      files,
    }),
  );
  try {
    execFileSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

describe('@chatgate/client types', () => {
  it('compile what the service accepts and reject what it refuses (test/fixtures/client-types.ts)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-client-types-'));
    try {
      expect(typecheck(dir, [fixture], true)).toBe('');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm pack of @chatgate/client', () => {
  let dir: string;
  let app: string;
  let manifest: { dependencies?: object; scripts?: Record<string, string>; files: { path: string }[] };
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-client-pack-'));
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: path.join(root, 'packages/client'),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const packed = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    manifest = { files: packed[0]!.files };
    app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    execFileSync(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, packed[0]!.filename)],
      { cwd: app, stdio: 'pipe' },
    );
    const installed = JSON.parse(
      fs.readFileSync(path.join(app, 'node_modules/@chatgate/client/package.json'), 'utf8'),
    ) as { dependencies?: object; scripts?: Record<string, string> };
    manifest.dependencies = installed.dependencies;
    manifest.scripts = installed.scripts;
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('holds the built code for ESM and CJS, their types, the document and a README; no runtime dependency', () => {
    const files = manifest.files.map((f) => f.path);
    for (const f of ['README.md', 'openapi.json', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js'])
      expect(files).toContain(f);
    expect(files).toContain('dist/cjs/index.d.ts');
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([]);
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(fs.readdirSync(path.join(app, 'node_modules'))).toEqual(['.package-lock.json', '@chatgate']);
  });

  it('runs nothing when installed: no install-time script, in the source manifest or the packed one', () => {
    const source = JSON.parse(fs.readFileSync(path.join(root, 'packages/client/package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    const installTime = ['preinstall', 'install', 'postinstall', 'prepare'];
    for (const scripts of [source.scripts, manifest.scripts])
      expect(Object.keys(scripts ?? {}).filter((s) => installTime.includes(s))).toEqual([]);
    // It is built before packing instead (prepack, which npm pack and npm publish run).
    expect(source.scripts?.prepack).toBe('npm run build');
  });

  it('loads with import and with require', () => {
    const check = `const w = m.createTestWebhook({ type: 'webhook.test', data: { webhookEndpointId: 'w', message: 'hi' } }, 's');
      const t = m.WEBHOOK_EVENT_TYPES.length + ':' + typeof m.ChatGate + ':' + typeof m.ChatGateOperator + ':'
        + typeof m.verifyWebhookSignature + ':' + m.constructEvent(w.body, w.headers, 's').type;
      const e = new m.ChatGateError(400, 'validation_error', { error: 'validation_error', details: [{ path: 'to', message: 'bad' }] });
      console.log(t + ':' + (e instanceof Error) + ':' + e.message);`;
    const esm = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `import * as m from '@chatgate/client';${check}`],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    const cjs = execFileSync(
      process.execPath,
      ['--input-type=commonjs', '-e', `const m = require('@chatgate/client');${check}`],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    expect(esm.trim()).toBe(
      `${EVENT_TYPES.length}:function:function:function:webhook.test:true:400 validation_error: to: bad`,
    );
    expect(cjs.trim()).toBe(esm.trim());
  });

  it('types resolve for an ES module and a CommonJS module of the installing project', () => {
    const source = fs
      .readFileSync(fixture, 'utf8')
      .replace(/from '\.\.\/\.\.\/packages\/client\/src\/index\.js'/, "from '@chatgate/client'");
    expect(source).toContain("from '@chatgate/client'");
    fs.writeFileSync(path.join(app, 'esm.mts'), source);
    fs.writeFileSync(path.join(app, 'cjs.cts'), source);
    expect(typecheck(app, ['esm.mts', 'cjs.cts'])).toBe('');
  });
});
