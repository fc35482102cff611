// Embedded driver. PGlite is one connection in this process (on its main thread, or in a thread of
// its own): statements run one at a time and a transaction holds the connection until it ends, so
// keep transactions short.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { PGlite } from '@electric-sql/pglite';

import { createInFlightCounter, createNotifyCoalescer, type Db, type Queryable, runAfterCommit } from './db.js';
import { openPgliteThread } from './pglite-thread.js';

type PgliteLike = Pick<PGlite, 'query' | 'exec'>;

function wrap(conn: PgliteLike): Queryable {
  return {
    async query<T>(text: string, params?: readonly unknown[]) {
      const res = await conn.query<T>(text, params as unknown[] | undefined);
      return res.rows;
    },
    async exec(text: string) {
      await conn.exec(text);
    },
  };
}

/**
 * A new database is created (PGlite's initdb) by a short-lived child process. Creating one costs
 * about 1 GB of memory for a moment (initdb runs as a second WebAssembly instance beside the
 * database's own), and a process's high-water mark (and some of that memory, never handed back)
 * stayed with the service for its whole life; opened afterwards, the database costs what it uses.
 */
async function createInChild(dataDir: string): Promise<void> {
  const module = import.meta.resolve('@electric-sql/pglite');
  const code =
    'const { PGlite } = await import(process.argv[1]); await (await PGlite.create(process.argv[2])).close();';
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code, module, dataDir], {
    env: {},
    maxBuffer: 1024 * 1024,
  });
}

/**
 * What both ways of running PGlite provide: one connection, whose transaction holds it until it
 * ends (statements outside wait meanwhile), and PGlite's NOTIFY.
 */
export type PgliteConnection = Queryable & {
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

/** PGlite on the calling thread. */
async function openHere(dataDir: string | null, startParams: string[], from?: Blob): Promise<PgliteConnection> {
  const pg = await PGlite.create(dataDir ?? undefined, { startParams, ...(from ? { loadDataDir: from } : {}) });
  return {
    ...wrap(pg),
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    async listen(channel, onPayload) {
      const unsubscribe = await pg.listen(channel, onPayload);
      return async () => unsubscribe();
    },
    close: () => pg.close(),
  };
}

/**
 * dataDir null keeps everything in memory (tests). `sharedBuffersMb`: PostgreSQL's page cache,
 * which lives in PGlite's WebAssembly memory (in this process, and WebAssembly memory never
 * shrinks): PGlite's default of 128 MB made most of the embedded service's footprint, while the
 * operating system caches the data files anyway. Unset: PGlite's default. `thread`: PGlite runs
 * in a worker thread of its own (pglite-thread.ts, decision 0058) rather than on the caller's.
 * `from` (in memory only): a data folder PGlite dumped (dumpDataDir), opened instead of a new
 * database: initdb takes seconds (5–15 s on a busy 2-core machine), restoring its result under one;
 * the test harness creates every test file's database this way.
 */
export async function openPgliteDb(
  dataDir: string | null,
  opts: { sharedBuffersMb?: number; thread?: boolean; from?: Blob } = {},
): Promise<Db> {
  if (opts.from && dataDir !== null) throw new Error('openPgliteDb: `from` is for a database in memory');
  if (dataDir !== null) {
    fs.mkdirSync(dataDir, { recursive: true });
    if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await createInChild(dataDir);
  }
  const settings = opts.sharedBuffersMb !== undefined ? ['-c', `shared_buffers=${opts.sharedBuffersMb}MB`] : [];
  const startParams = [...PGlite.defaultStartParams, ...settings];
  const conn = opts.thread
    ? await openPgliteThread(dataDir, startParams, opts.from)
    : await openHere(dataDir, startParams, opts.from);
  const inFlight = createInFlightCounter(1);
  const notifier = createNotifyCoalescer((channel) =>
    inFlight.track(() => conn.query('SELECT pg_notify($1, $2)', [channel, ''])),
  );
  const context = new Map<symbol, unknown>();
  return {
    kind: 'pglite',
    context,
    query: (text, params) => inFlight.track(() => conn.query(text, params)),
    exec: (text) => inFlight.track(() => conn.exec(text)),
    async transaction(fn) {
      const channels = new Set<string>();
      const after: (() => void)[] = [];
      const result = await inFlight.track(() =>
        conn.transaction((tx) =>
          fn({
            ...tx,
            context,
            notifyAfterCommit: (c) => void channels.add(c),
            afterCommit: (f) => void after.push(f),
          }),
        ),
      );
      for (const c of channels) notifier.ping(c);
      runAfterCommit(after);
      return result;
    },
    stats: inFlight.stats,
    listen: (channel, onPayload) => conn.listen(channel, onPayload),
    close() {
      notifier.close();
      return conn.close();
    },
  };
}
