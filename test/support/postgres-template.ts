// PostgreSQL's counterpart of pglite-template.ts: one database per test run, migrated once by the
// service's own migrate(), from which each test's database is copied (CREATE DATABASE … TEMPLATE),
// instead of running the 37 migrations again for every database a test creates.
import crypto from 'node:crypto';

import pg from 'pg';
import { inject } from 'vitest';

import { migrate } from '../../src/db/migrate.js';
import { openPostgresDb } from '../../src/db/postgres-db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresTemplate: string | null;
  }
}

async function onServer<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Made by the global setup; nothing may stay connected to it (a copy needs it idle). */
export async function createPostgresTemplate(serverUrl: string): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `chatgate_template_${crypto.randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = await openPostgresDb(url.toString(), 1);
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  return {
    name,
    drop: () => onServer(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/** The run's migrated template database, or, outside a vitest run, none (an empty database, migrated as the service starts). */
export function postgresTemplate(): string | null {
  try {
    return inject('postgresTemplate');
  } catch {
    return null;
  }
}
