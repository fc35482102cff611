// One fresh database per scenario, removed afterwards: a new PostgreSQL database on the local
// server, or a temporary on-disk PGlite directory (as in the real embedded mode).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

export type Backend = 'postgres' | 'pglite';

export type BenchDatabase = {
  backend: Backend;
  /** Environment for the server under test: DATABASE_URL or DATA_DIR. */
  env: Record<string, string>;
  /** Rows in a table, read after the server has stopped (PGlite allows one process at a time). */
  count(table: string): Promise<number>;
  drop(): Promise<void>;
};

export async function postgresReachable(adminUrl: string): Promise<boolean> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 3 });
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

export async function createDatabase(backend: Backend, adminUrl: string): Promise<BenchDatabase> {
  const suffix = crypto.randomBytes(5).toString('hex');
  if (backend === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `chatgate-bench-${suffix}-`));
    return {
      backend,
      env: { DATA_DIR: dir },
      async count(table) {
        const db = await PGlite.create(path.join(dir, 'pgdata'));
        try {
          const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
          return rows[0]!.n;
        } finally {
          await db.close();
        }
      },
      drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = `chatgate_bench_${suffix}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    backend,
    env: { DATABASE_URL: url.toString() },
    async count(table) {
      const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        const rows = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`);
        return rows[0]!.n;
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 1 });
    },
  };
}
