// `chatgate` as the tests run it as a program: src/ transpiled once per test run by vitest's global
// setup (esbuild, file by file, into the layout `npm run build` gives dist/src, so the migrations,
// portal assets and package.json are found the same way), then `node <that>/src/cli.js ...` per
// command. Run with `--import tsx` instead, every command transpiled its ~300 files again (3–4 s a
// spawn on a busy 2-core machine; the CLI tests spawn it a hundred times). The code run is still
// src/cli.ts and what it imports, as the test run found them; `tsx src/cli.ts` itself (the README's
// way) keeps a test of its own in test/cli.test.ts, and docs/quickstart.md's run uses it too.
import fs from 'node:fs';
import path from 'node:path';

import { build } from 'esbuild';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    chatgateCli: string;
  }
}

const SRC = 'src';

/** Transpiles src/ (without its tests) into `outDir`/src and copies its other files; returns the path of cli.js. */
export async function buildCli(outDir: string): Promise<string> {
  fs.rmSync(outDir, { recursive: true, force: true });
  const files = fs.readdirSync(SRC, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  const rel = files.map((f) => path.relative(SRC, path.join(f.parentPath, f.name)));
  const isCode = (f: string) => f.endsWith('.ts') && !f.endsWith('.test.ts');
  await build({
    entryPoints: rel.filter(isCode).map((f) => path.join(SRC, f)),
    outbase: SRC,
    outdir: path.join(outDir, SRC),
    format: 'esm',
    platform: 'node',
    target: 'node22',
    sourcemap: true, // used when a test runs with NODE_OPTIONS=--enable-source-maps
    logLevel: 'warning',
  });
  for (const f of rel.filter((f) => !f.endsWith('.ts'))) {
    fs.mkdirSync(path.join(outDir, SRC, path.dirname(f)), { recursive: true });
    fs.copyFileSync(path.join(SRC, f), path.join(outDir, SRC, f));
  }
  return path.resolve(outDir, SRC, 'cli.js');
}

/**
 * The node arguments that run `chatgate <args>`: the global setup's transpiled cli.js, or, outside
 * a vitest run (bench/), `--import tsx src/cli.ts`.
 */
export function chatgateArgs(...args: string[]): string[] {
  let cli: string | undefined;
  try {
    cli = inject('chatgateCli');
  } catch {
    cli = undefined;
  }
  return cli ? [cli, ...args] : ['--import', 'tsx', 'src/cli.ts', ...args];
}
