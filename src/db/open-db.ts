import path from 'node:path';

import type { Config } from '../config.js';
import { lockDataDir, prepareDataDir, secureDataDir } from './data-dir.js';
import type { Db } from './db.js';
import { openPgliteDb } from './pglite-db.js';
import { type DbDeadlines, openPostgresDb } from './postgres-db.js';

/** The configured bounds of every PostgreSQL call (docs/configuration.md: DATABASE_*_TIMEOUT_MS). */
export const dbDeadlines = (
  config: Pick<Config, 'dbStatementTimeoutMs' | 'dbTransactionTimeoutMs' | 'dbConnectTimeoutMs'>,
): DbDeadlines => ({
  statementMs: config.dbStatementTimeoutMs,
  transactionMs: config.dbTransactionTimeoutMs,
  connectMs: config.dbConnectTimeoutMs,
});

/**
 * PostgreSQL when DATABASE_URL is set; otherwise the embedded database under DATA_DIR, which this
 * process then holds alone (a lock file, released when the database closes or the process exits)
 * and keeps private (files 0600, folders 0700: modes found wider are narrowed, and logged).
 */
export async function openDb(
  config: Pick<
    Config,
    | 'databaseUrl'
    | 'dataDir'
    | 'dbPoolSize'
    | 'embeddedSharedBuffersMb'
    | 'embeddedDbThread'
    | 'dbStatementTimeoutMs'
    | 'dbTransactionTimeoutMs'
    | 'dbConnectTimeoutMs'
  >,
  opts: { log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void } } = {},
): Promise<Db> {
  if (config.databaseUrl !== null)
    return openPostgresDb(config.databaseUrl, config.dbPoolSize, { ...opts, deadlines: dbDeadlines(config) });
  prepareDataDir(config.dataDir);
  const lock = lockDataDir(config.dataDir);
  try {
    const fixed = secureDataDir(config.dataDir);
    if (fixed > 0)
      opts.log?.warn(
        { dataDir: config.dataDir, fixed },
        'DATA_DIR held files readable by other users: narrowed them to the owner (files 0600, folders 0700)',
      );
    const db = await openPgliteDb(path.join(config.dataDir, 'pgdata'), {
      sharedBuffersMb: config.embeddedSharedBuffersMb,
      thread: config.embeddedDbThread,
    });
    // A new database's files come out of PGlite's initdb as 0666 whatever the umask (files the
    // database creates later honour it): narrowed as soon as it has opened.
    secureDataDir(config.dataDir);
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}
