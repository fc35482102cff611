// The embedded databases every test file starts from, made once per test run by vitest's global
// setup and dumped to files: PGlite's initdb (`empty`, for the tests of migrating itself) and the
// same with every migration applied (`migrated`, what a test's new database is by default). Each
// database a test creates is a restore of one (openPgliteDb's `from`). initdb took 5–15 s per
// database on a busy 2-core machine and the 37 migrations about 0.2 CPU-s more; a restore takes
// well under a second. The two files are kept between runs in node_modules/.cache, named by what
// makes them (PGlite's version and every migration's checksum), so that a run of one file does
// not pay initdb again (about 10 CPU-s).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';

import type { Db } from '../../src/db/db.js';
import { migrate, readMigrations } from '../../src/db/migrate.js';

export type PgliteTemplates = { empty: string; migrated: string };

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplates: PgliteTemplates | null;
  }
}

const CACHE = path.join('node_modules', '.cache', 'chatgate-test-databases');

/**
 * The run's two files, from the cache when they are there (made and put there first when not);
 * older versions are removed. Several runs at once each write their own temporary file and rename
 * it into place, so none reads a half-written one.
 */
export async function pgliteTemplates(): Promise<PgliteTemplates> {
  const manifest = path.join('node_modules', '@electric-sql', 'pglite', 'package.json'); // not among its exports
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string };
  const key = crypto
    .createHash('sha256')
    .update([version, ...readMigrations().map((m) => `${m.name}:${m.checksum}`)].join('\n'))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(CACHE, key);
  const files = { empty: path.join(dir, 'empty.tar'), migrated: path.join(dir, 'migrated.tar') };
  if (fs.existsSync(files.empty) && fs.existsSync(files.migrated)) return files;
  fs.mkdirSync(dir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(dir, 'making-'));
  try {
    const made = { empty: path.join(tmp, 'empty.tar'), migrated: path.join(tmp, 'migrated.tar') };
    await writePgliteTemplates(made);
    fs.renameSync(made.empty, files.empty);
    fs.renameSync(made.migrated, files.migrated);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  for (const old of fs.readdirSync(CACHE))
    if (old !== key) fs.rmSync(path.join(CACHE, old), { recursive: true, force: true });
  return files;
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
