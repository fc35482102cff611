import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../src/config.js';
import { migrate, readMigrations } from '../src/db/migrate.js';
import { openDb } from '../src/db/open-db.js';
import {
  call,
  createTenant,
  createTestDatabase,
  type Service,
  startService,
  type TestDatabase,
} from './support/harness.js';

describe('the embedded database', () => {
  it('runs with the page cache EMBEDDED_SHARED_BUFFERS_MB sets (32 MB unless set)', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chatgate-buffers-'));
    try {
      for (const [env, expected] of [
        [{}, '32MB'],
        [{ EMBEDDED_SHARED_BUFFERS_MB: '8' }, '8MB'],
      ] as const) {
        const db = await openDb(loadConfig({ DATA_DIR: dataDir, ...env }));
        try {
          const [row] = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
          expect(row!.shared_buffers).toBe(expected);
        } finally {
          await db.close();
        }
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('migrations', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ empty: true }); // as initdb leaves it: every migration to apply
  });
  afterAll(() => database.drop());

  it('apply once when several processes start together, and refuse a changed file', async () => {
    const results = await Promise.all([migrate(database.db), migrate(database.db), migrate(database.db)]);
    const all = readMigrations().map((m) => m.name);
    expect(results.flat().sort()).toEqual(all);
    const [row] = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
    expect(row!.n).toBe(all.length);
    const changed = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'x' } : m));
    await expect(migrate(database.db, changed)).rejects.toThrow(/was changed after it was applied/);
  });
});

describe('unexpected errors', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('answer the bare 500 body, without detail', async () => {
    const t = await createTenant(svc.url);
    await svc.db.query('ALTER TABLE messages RENAME TO messages_away');
    try {
      const res = await call(svc.url, 'GET', '/messages', { key: t.key });
      expect(res).toMatchObject({ status: 500, body: { error: 'Internal server error' } });
      expect(Object.keys(res.body)).toEqual(['error']);
    } finally {
      await svc.db.query('ALTER TABLE messages_away RENAME TO messages');
    }
    expect((await call(svc.url, 'GET', '/messages', { key: t.key })).status).toBe(200);
  });
});
