// Embedded driver. PGlite is one connection in this process: statements run one at a time
// and a transaction holds the connection until it ends, so keep transactions short.
import fs from 'node:fs';

import { PGlite } from '@electric-sql/pglite';

import type { Db, Queryable } from './db.js';

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

/** dataDir null keeps everything in memory (tests). */
export async function openPgliteDb(dataDir: string | null): Promise<Db> {
  if (dataDir !== null) fs.mkdirSync(dataDir, { recursive: true });
  const pg = await PGlite.create(dataDir ?? undefined);
  const base = wrap(pg);
  return {
    kind: 'pglite',
    ...base,
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    async listen(channel, onPayload) {
      const unsubscribe = await pg.listen(channel, onPayload);
      return async () => unsubscribe();
    },
    close: () => pg.close(),
  };
}
