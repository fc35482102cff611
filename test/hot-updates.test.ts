// A message's receipts (sent → delivered → read) and a delivery's lease change only columns no
// index reads, so PostgreSQL can update those rows in place (HOT) without new index entries, when
// the page has room (migration 016, decision 0017). An index that reads one of them, in its
// columns or its predicate, makes every such update write into every index of the table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate } from '../src/db/migrate.js';
import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

/**
 * Columns a receipt, a send's start or a delivery claim or start changes (apply-receipt.ts
 * advanceMessages, claim.ts startAttempts, claimDueDeliveries, startDeliveryAttempts).
 */
const CHANGED_BY_RECEIPTS = [
  'status',
  'sent_at',
  'delivered_at',
  'read_at',
  'failed_at',
  'error',
  'last_error_code',
  'attempt_count',
  'last_attempt_at',
  'locked_by',
  'locked_until',
];
const CHANGED_BY_DELIVERY_CLAIMS = ['locked_by', 'locked_until', 'attempt_count'];

describe(`room for in-place updates (${backend})`, () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.db);
  });
  afterAll(() => database?.drop());

  async function indexesReading(table: string, columns: string[]) {
    const rows = await database.db.query<{ name: string; def: string }>(
      `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = $1::regclass`,
      [table],
    );
    expect(rows.length).toBeGreaterThan(3);
    return rows.filter((r) => columns.some((col) => new RegExp(`\\b${col}\\b`).test(r.def))).map((r) => r.name);
  }

  it('no index of messages reads a column that receipts change', async () => {
    expect(await indexesReading('messages', CHANGED_BY_RECEIPTS)).toEqual([]);
  });

  it('no index of webhook_deliveries reads the lease columns or the attempt count', async () => {
    expect(await indexesReading('webhook_deliveries', CHANGED_BY_DELIVERY_CLAIMS)).toEqual([]);
  });

  it('messages and webhook_deliveries leave room on their pages', async () => {
    const rows = await database.db.query<{ relname: string; reloptions: string[] | null }>(
      `SELECT relname, reloptions FROM pg_class WHERE relname IN ('messages', 'webhook_deliveries') ORDER BY relname`,
    );
    expect(rows.map((r) => [r.relname, r.reloptions])).toEqual([
      ['messages', ['fillfactor=85']],
      ['webhook_deliveries', ['fillfactor=85']],
    ]);
  });
});
