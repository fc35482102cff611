// The keyset-pagination helper (src/shared/keyset.ts) over a real database (PGlite, or PostgreSQL
// with DATABASE_URL): following nextCursor from the first page visits every row matching the
// conditions exactly once, newest first with ties on the instant broken by id, whatever the rows,
// the page size and the sort key's table alias; the cursor is the one shared/cursor.ts encodes.
// Following prevCursor back with `before` gives the same pages again (the portal's Previous page).
import crypto from 'node:crypto';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeCursor, encodeCursor } from '../src/shared/cursor.js';
import { checkCursor, keysetPage } from '../src/shared/keyset.js';
import { createTestDatabase, type TestDatabase } from './support/harness.js';

type Item = { id: string; created_at: Date; tag: number };

describe('keysetPage', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.exec(
      'CREATE TABLE keyset_items (id uuid PRIMARY KEY, created_at timestamptz NOT NULL, tag int NOT NULL)',
    );
  });
  afterAll(() => t.drop());

  /** Rows whose instants collide often (a few milliseconds apart at most), as rows written in one batch do. */
  const rowsArb = fc.uniqueArray(
    fc.record({ ms: fc.integer({ min: 0, max: 5 }), tag: fc.integer({ min: 0, max: 2 }), id: fc.uuid({ version: 4 }) }),
    { maxLength: 25, selector: (r) => r.id },
  );

  async function load(rows: { ms: number; tag: number; id: string }[]): Promise<Item[]> {
    await t.db.query('DELETE FROM keyset_items');
    const base = Date.UTC(2026, 0, 1);
    for (const r of rows)
      await t.db.query('INSERT INTO keyset_items (id, created_at, tag) VALUES ($1, $2, $3)', [
        r.id,
        new Date(base + r.ms).toISOString(),
        r.tag,
      ]);
    return rows.map((r) => ({ id: r.id, created_at: new Date(base + r.ms), tag: r.tag }));
  }

  /** Every page from the first, following nextCursor. */
  async function all(limit: number, tag: number, alias: boolean): Promise<{ pages: Item[][]; cursors: string[] }> {
    const pages: Item[][] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await keysetPage<Item>(
        t.db,
        alias
          ? {
              select: 'SELECT k.id, k.created_at, k.tag FROM keyset_items k',
              where: ['k.tag = $1'],
              params: [tag],
              key: { at: 'k.created_at', id: 'k.id' },
            }
          : { select: 'SELECT id, created_at, tag FROM keyset_items', where: ['tag = $1'], params: [tag] },
        { limit, cursor },
      );
      pages.push(page.rows);
      if (page.nextCursor === null) return { pages, cursors };
      cursors.push(page.nextCursor);
      cursor = page.nextCursor;
      expect(pages.length).toBeLessThanOrEqual(30);
    }
  }

  it('visits every matching row once, newest first, ties broken by id descending', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        async (rows, limit, tag, alias) => {
          const items = await load(rows);
          const expected = items
            .filter((i) => i.tag === tag)
            .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1));
          const { pages, cursors } = await all(limit, tag, alias);
          expect(pages.flat().map((r) => r.id)).toEqual(expected.map((r) => r.id));
          // Full pages but the last; a last page is never empty unless the list is.
          for (const p of pages.slice(0, -1)) expect(p).toHaveLength(limit);
          if (expected.length > 0) expect(pages.at(-1)!.length).toBeGreaterThan(0);
          // Each cursor names the last row of its page, in the one cursor format.
          cursors.forEach((c, i) => {
            const last = pages[i]!.at(-1)!;
            expect(c).toBe(encodeCursor({ createdAt: last.created_at, id: last.id }));
            expect(decodeCursor(c).id).toBe(last.id);
          });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('walks back with `before`: from the last page, each prevCursor gives the page before it, the same rows', async () => {
    await fc.assert(
      fc.asyncProperty(rowsArb, fc.integer({ min: 1, max: 6 }), async (rows, limit) => {
        await load(rows);
        const query = { select: 'SELECT id, created_at, tag FROM keyset_items', where: [], params: [] };
        const forward: { rows: Item[]; prevCursor: string | null }[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await keysetPage<Item>(t.db, query, { limit, cursor });
          forward.push(page);
          if (page.nextCursor === null) break;
          cursor = page.nextCursor;
        }
        // The first page has no page before it; every later one does.
        expect(forward[0]!.prevCursor).toBeNull();
        let before = forward.at(-1)!.prevCursor;
        for (let i = forward.length - 2; i >= 0; i--) {
          const page = await keysetPage<Item>(t.db, query, { limit, before: before! });
          expect(page.rows.map((r) => r.id)).toEqual(forward[i]!.rows.map((r) => r.id));
          expect(page.prevCursor === null).toBe(i === 0);
          before = page.prevCursor;
        }
      }),
      { numRuns: 30 },
    );
  });

  it('an empty condition list reads the whole table', async () => {
    const items = await load([
      { ms: 1, tag: 0, id: crypto.randomUUID() },
      { ms: 2, tag: 1, id: crypto.randomUUID() },
    ]);
    const page = await keysetPage<Item>(
      t.db,
      { select: 'SELECT id, created_at, tag FROM keyset_items', where: [], params: [] },
      { limit: 5 },
    );
    expect(page.rows.map((r) => r.id)).toEqual([items[1]!.id, items[0]!.id]);
    expect(page.nextCursor).toBeNull();
  });

  it('refuses a malformed cursor with invalid_cursor before querying', async () => {
    const bad = { limit: 5, cursor: 'not a cursor' };
    await expect(
      keysetPage(t.db, { select: 'SELECT * FROM no_such_table', where: [], params: [] }, bad),
    ).rejects.toMatchObject({ code: 'invalid_cursor' });
    expect(() => checkCursor(bad.cursor)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
    expect(() => checkCursor(undefined)).not.toThrow();
  });
});
