// The embedded database every test file starts from: PGlite's initdb, run once per test run by
// vitest's global setup and its data folder dumped to a file; each database a test creates is a
// restore of it (openPgliteDb's `from`), new and empty as initdb leaves it, migrations still to run.
// initdb took 5–15 s per database on a busy 2-core machine, a restore takes about one.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | null;
  }
}

/**
 * initdb in a child process (its moment of ~1 GB stays out of vitest's own process, as
 * pglite-db.ts does it for the service) and the data folder written to `file`.
 */
export async function writePgliteTemplate(file: string): Promise<void> {
  const code = `const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create();
    const dump = await pg.dumpDataDir('none');
    await pg.close();
    (await import('node:fs')).writeFileSync(process.argv[1], Buffer.from(await dump.arrayBuffer()));`;
  await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', code, file],
    { maxBuffer: 1024 * 1024 }, // in the project's folder, where the package resolves
  );
}

let template: Promise<Blob> | undefined;

/** The global setup's data folder (read once per test process), or, outside a vitest run, none: initdb. */
export function newPgliteDataDir(): Promise<Blob | undefined> {
  let file: string | null = null;
  try {
    file = inject('pgliteTemplate');
  } catch {
    file = null;
  }
  if (!file) return Promise.resolve(undefined);
  template ??= fs.openAsBlob(file);
  return template;
}
