// The embedded databases every test file starts from, made once per test run by vitest's global
// setup and dumped to files: PGlite's initdb (`empty`, for the tests of migrating itself) and the
// same with every migration applied (`migrated`, what a test's new database is by default). Each
// database a test creates is a restore of one (openPgliteDb's `from`). initdb took 5–15 s per
// database on a busy 2-core machine and the 37 migrations about 0.2 CPU-s more; a restore takes
// well under a second.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';

import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';

export type PgliteTemplates = { empty: string; migrated: string };

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplates: PgliteTemplates | null;
  }
}

/**
 * initdb in a child process (its moment of ~1 GB stays out of vitest's own process, as
 * pglite-db.ts does it for the service) and the data folder written to `files.empty`; then that
 * folder opened here, migrated by the service's own migrate(), and written to `files.migrated`.
 */
export async function writePgliteTemplates(files: PgliteTemplates): Promise<void> {
  const code = `const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create();
    const dump = await pg.dumpDataDir('none');
    await pg.close();
    (await import('node:fs')).writeFileSync(process.argv[1], Buffer.from(await dump.arrayBuffer()));`;
  await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', code, files.empty],
    { maxBuffer: 1024 * 1024 }, // in the project's folder, where the package resolves
  );
  const pg = await PGlite.create({ loadDataDir: await fs.openAsBlob(files.empty) });
  try {
    const rows = async (q: Promise<{ rows: unknown[] }>) => (await q).rows;
    // migrate() needs only a transaction with query and exec: PGlite's own, as pglite-db.ts wraps it.
    const db = {
      transaction: (fn: (tx: unknown) => Promise<unknown>) =>
        pg.transaction((tx) =>
          fn({
            query: (text: string, params?: unknown[]) => rows(tx.query(text, params)),
            exec: async (text: string) => void (await tx.exec(text)),
          }),
        ),
    } as unknown as Db;
    await migrate(db);
    const dump = await pg.dumpDataDir('none');
    fs.writeFileSync(files.migrated, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await pg.close();
  }
}

const templates = new Map<keyof PgliteTemplates, Promise<Blob>>();

/**
 * The global setup's data folder of that kind (read once per test process), or, outside a vitest
 * run, none: initdb, and the service migrates as it starts.
 */
export function newPgliteDataDir(kind: keyof PgliteTemplates = 'migrated'): Promise<Blob | undefined> {
  let files: PgliteTemplates | null = null;
  try {
    files = inject('pgliteTemplates');
  } catch {
    files = null;
  }
  if (!files) return Promise.resolve(undefined);
  let blob = templates.get(kind);
  if (!blob) templates.set(kind, (blob = fs.openAsBlob(files[kind])));
  return blob;
}
