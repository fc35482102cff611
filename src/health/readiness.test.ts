import { describe, expect, it } from 'vitest';

import { createReadiness } from './readiness.js';

const log = { warn: () => {}, info: () => {} };
const migrations = ['001_a.sql', '002_b.sql'];

describe('readiness', () => {
  it('is ready when every known migration is applied, whatever else the table holds', async () => {
    const db = { query: async () => [{ name: '001_a.sql' }, { name: '002_b.sql' }, { name: '003_newer.sql' }] };
    expect(await createReadiness({ db: db as never, log, migrations }).check()).toEqual({ ready: true });
  });

  it('lists every migration as pending before the migrations table exists', async () => {
    const db = { query: () => Promise.reject(Object.assign(new Error('no table'), { code: '42P01' })) };
    expect(await createReadiness({ db: db as never, log, migrations }).check()).toEqual({
      ready: false,
      reasons: [{ check: 'migrations', pending: migrations }],
    });
  });

  it('counts a database that does not answer in time as unavailable, without its error text', async () => {
    const hung = { query: () => new Promise(() => {}) };
    expect(await createReadiness({ db: hung as never, log, migrations, timeoutMs: 20 }).check()).toEqual({
      ready: false,
      reasons: [{ check: 'database', error: 'no answer within 20 ms' }],
    });
    const refused = { query: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432')) };
    expect(await createReadiness({ db: refused as never, log, migrations }).check()).toEqual({
      ready: false,
      reasons: [{ check: 'database', error: 'unreachable' }],
    });
  });

  it('logs a change of readiness once, not every probe', async () => {
    const lines: string[] = [];
    let up = false;
    const db = { query: async () => (up ? migrations.map((name) => ({ name })) : Promise.reject(new Error('down'))) };
    const r = createReadiness({
      db: db as never,
      log: {
        warn: (_o: unknown, m?: string) => lines.push(`warn ${m}`),
        info: (m: string) => lines.push(`info ${m}`),
      } as never,
      migrations,
    });
    await r.check();
    await r.check();
    up = true;
    await r.check();
    await r.check();
    expect(lines).toEqual(['warn not ready', 'info ready again']);
  });

  it('is not ready while a database fault was seen lately, though its own SELECT answers', async () => {
    const db = { query: async () => migrations.map((name) => ({ name })) };
    let recent = [{ reason: 'disk_full' as const, count: 3, lastSeenMsAgo: 2_500 }];
    const r = createReadiness({ db: db as never, log, migrations, faults: { recent: () => recent } });
    expect(await r.check()).toEqual({
      ready: false,
      reasons: [{ check: 'database_fault', reason: 'disk_full', count: 3, lastSeenSecondsAgo: 2 }],
    });
    recent = [];
    expect(await r.check()).toEqual({ ready: true });
  });

  it('is not ready while a part of the write path is stuck past the bound, and names it', async () => {
    const db = { query: async () => migrations.map((name) => ({ name })) };
    let stalls = [
      { part: 'accept' as const, stalledMs: 12_400 },
      { part: 'dispatcher' as const, stalledMs: 9_000 },
    ];
    const r = createReadiness({ db: db as never, log, migrations, stalls: () => stalls, stallBoundMs: 10_000 });
    expect(await r.check()).toEqual({
      ready: false,
      reasons: [{ check: 'write_path', part: 'accept', stalledSeconds: 12 }],
    });
    stalls = [
      { part: 'accept', stalledMs: 0 },
      { part: 'dispatcher', stalledMs: 10_001 },
    ];
    expect(await r.check()).toEqual({
      ready: false,
      reasons: [{ check: 'write_path', part: 'dispatcher', stalledSeconds: 10 }],
    });
    stalls = [{ part: 'dispatcher', stalledMs: 0 }];
    expect(await r.check()).toEqual({ ready: true });
  });

  it('lists faults and stalls beside an unreachable database', async () => {
    const refused = { query: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432')) };
    const r = createReadiness({
      db: refused as never,
      log,
      migrations,
      faults: { recent: () => [{ reason: 'connection', count: 9, lastSeenMsAgo: 100 }] },
      stalls: () => [{ part: 'dispatcher', stalledMs: 30_000 }],
    });
    expect(await r.check()).toEqual({
      ready: false,
      reasons: [
        { check: 'database', error: 'unreachable' },
        { check: 'write_path', part: 'dispatcher', stalledSeconds: 30 },
        { check: 'database_fault', reason: 'connection', count: 9, lastSeenSecondsAgo: 0 },
      ],
    });
  });
});
