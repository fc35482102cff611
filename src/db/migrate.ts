// Forward-only numbered .sql migrations, applied in one transaction under an advisory lock
// so several processes may start at once; an applied file that changed stops start-up.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { Db } from './db.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const LOCK_KEY = 727_001; // arbitrary, constant: the migration lock of this schema
/** A migration may rewrite a large table: its transaction gets this bound, not the configured one. */
const MIGRATION_DEADLINE_MS = 60 * 60_000;

export type Migration = { name: string; sql: string; checksum: string };

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(`${dir}/${name}`, 'utf8');
      return { name, sql, checksum: crypto.createHash('sha256').update(sql).digest('hex') };
    });
}

/** Applies pending migrations; returns the names applied now. */
export async function migrate(db: Db, migrations = readMigrations()): Promise<string[]> {
  return db.transaction(
    async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const applied = new Map(
        (await tx.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations')).map(
          (r) => [r.name, r.checksum],
        ),
      );
      const done: string[] = [];
      for (const m of migrations) {
        const previous = applied.get(m.name);
        if (previous !== undefined) {
          if (previous !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
          continue;
        }
        await tx.exec(m.sql);
        await tx.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [m.name, m.checksum]);
        done.push(m.name);
      }
      return done;
    },
    { deadlineMs: MIGRATION_DEADLINE_MS },
  );
}
