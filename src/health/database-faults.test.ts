import { describe, expect, it } from 'vitest';

import type { Db } from '../db/db.js';
import { createDatabaseFaults, watchDb } from './database-faults.js';

const pgError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

function harness(opts: { windowMs?: number; logPeriodMs?: number } = {}) {
  let now = 1_000_000;
  const lines: { reason: string; faults: number }[] = [];
  const counted: string[] = [];
  const faults = createDatabaseFaults({
    log: { warn: (obj: { reason: string; faults: number }) => void lines.push(obj) } as never,
    count: (reason) => void counted.push(reason),
    now: () => now,
    ...opts,
  });
  return { faults, lines, counted, advance: (ms: number) => void (now += ms) };
}

describe('database faults', () => {
  it('counts every fault but logs a reason once per period, with the number seen since the last line', () => {
    const { faults, lines, counted, advance } = harness({ logPeriodMs: 60_000 });
    for (let i = 0; i < 100; i++) expect(faults.report(pgError('53100'))).toBe('disk_full');
    faults.report(pgError('25006'));
    expect(counted).toHaveLength(101);
    expect(lines.map((l) => [l.reason, l.faults])).toEqual([
      ['disk_full', 1],
      ['read_only', 1],
    ]);
    advance(59_000);
    faults.report(pgError('53100'));
    expect(lines).toHaveLength(2);
    advance(1_000);
    faults.report(pgError('53100'));
    expect(lines.map((l) => [l.reason, l.faults])).toEqual([
      ['disk_full', 1],
      ['read_only', 1],
      ['disk_full', 101],
    ]);
  });

  it('ignores errors that are not faults, and counts one error once however many edges report it', () => {
    const { faults, counted } = harness();
    expect(faults.report(pgError('23505'))).toBeNull(); // a unique violation: ours to handle
    expect(faults.report(new Error('boom'))).toBeNull();
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    faults.report(reset);
    faults.report(reset);
    expect(counted).toEqual(['connection']);
  });

  it('remembers faults for the window after the last one, most recent first', () => {
    const { faults, advance } = harness({ windowMs: 10_000 });
    expect(faults.recent()).toEqual([]);
    faults.report(pgError('53100'));
    advance(4_000);
    faults.report(pgError('53300'));
    faults.report(pgError('53300'));
    advance(1_000);
    expect(faults.recent()).toEqual([
      { reason: 'too_many_connections', count: 2, lastSeenMsAgo: 1_000 },
      { reason: 'disk_full', count: 1, lastSeenMsAgo: 5_000 },
    ]);
    advance(5_001);
    expect(faults.recent().map((f) => f.reason)).toEqual(['too_many_connections']);
    advance(4_000);
    expect(faults.recent()).toEqual([]);
    // A fault after a quiet window starts its count again.
    faults.report(pgError('53300'));
    expect(faults.recent()).toEqual([{ reason: 'too_many_connections', count: 1, lastSeenMsAgo: 0 }]);
  });

  it('watchDb reports what comes out of every call of the seam and passes results and errors through', async () => {
    const { faults, counted } = harness();
    const full = pgError('53100');
    const db = {
      kind: 'postgres',
      stats: () => ({ size: 1, inUse: 0, waiting: 0 }),
      query: async (text: string) => {
        if (text === 'fail') throw full;
        return [{ text }];
      },
      exec: async () => {
        throw pgError('57P01');
      },
      transaction: async <T>(fn: (tx: unknown) => Promise<T>) => fn({}),
      listen: async () => async () => {},
      close: async () => {},
    } as unknown as Db;
    const watched = watchDb(db, faults);
    expect(watched.kind).toBe('postgres');
    expect(watched.stats()).toEqual({ size: 1, inUse: 0, waiting: 0 });
    expect(await watched.query('SELECT 1')).toEqual([{ text: 'SELECT 1' }]);
    await expect(watched.query('fail')).rejects.toBe(full);
    await expect(watched.exec('x')).rejects.toMatchObject({ code: '57P01' });
    await expect(
      watched.transaction(async () => {
        throw pgError('25006');
      }),
    ).rejects.toMatchObject({ code: '25006' });
    expect(await watched.transaction(async () => 7)).toBe(7);
    expect(counted).toEqual(['disk_full', 'shutdown', 'read_only']);
  });
});
