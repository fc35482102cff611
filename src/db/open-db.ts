import path from 'node:path';

import type { Config } from '../config.js';
import type { Db } from './db.js';
import { openPgliteDb } from './pglite-db.js';
import { openPostgresDb } from './postgres-db.js';

export function openDb(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolSize' | 'embeddedSharedBuffersMb'>,
): Promise<Db> {
  return config.databaseUrl !== null
    ? openPostgresDb(config.databaseUrl, config.dbPoolSize)
    : openPgliteDb(path.join(config.dataDir, 'pgdata'), { sharedBuffersMb: config.embeddedSharedBuffersMb });
}
