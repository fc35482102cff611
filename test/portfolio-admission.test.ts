// The portfolio limit's admission under concurrency (decision 0044): many transactions at once
// (on PostgreSQL, as many worker processes would, each on its own connection) admit exactly the
// limit's worth of new recipients, never more: the portfolio row serialises them.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { admitConversationStarts, setMessagingLimit } from '../src/accounts/portfolio-store.js';
import { migrate } from '../src/db/migrate.js';
import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

describe(`portfolio admission (${backend})`, () => {
  let database: TestDatabase;
  const accounts = [crypto.randomUUID(), crypto.randomUUID()];
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.db);
    const customer = crypto.randomUUID();
    await database.db.query(`INSERT INTO customers (id, name, plan) VALUES ($1, 'c', 'pro')`, [customer]);
    for (const [i, id] of accounts.entries())
      await database.db.query(
        `INSERT INTO chat_accounts (id, customer_id, type, status, phone_number, display_name, phone_number_id, waba_id, portfolio_id)
         VALUES ($1, $2, 'OFFICIAL', 'CONNECTED', '+15550100200', 'a', $3, 'w', 'shared')`,
        [id, customer, `pn-${i}-${id}`],
      );
    await setMessagingLimit(database.db, accounts, 7, 'operator');
  });
  afterAll(() => database?.drop());

  it('admits exactly the limit over concurrent transactions, each recipient once', async () => {
    const { db } = database;
    // 12 transactions of 4 sends: 40 distinct recipients, one of them (the same person) in every batch.
    const batches = Array.from({ length: 12 }, (_, b) =>
      Array.from({ length: 4 }, (_, i) => ({
        messageId: crypto.randomUUID(),
        accountId: accounts[(b + i) % 2]!,
        recipient: i === 0 ? '+15559990000' : `+1555${b}${i}000${b}`,
      })),
    );
    const results = await Promise.all(
      batches.map((starts) => db.transaction((tx) => admitConversationStarts(tx, starts))),
    );
    const admitted = batches.flat().filter((s) => !results.some((r) => r.refused.has(s.messageId)));
    const counted = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM portfolio_recipients WHERE portfolio_key = 'p:shared'`,
    );
    expect(counted[0]!.n).toBe(7);
    expect(new Set(admitted.map((s) => s.recipient)).size).toBe(7);
    // The shared person was admitted in every batch after the first one that counted them.
    expect(admitted.filter((s) => s.recipient === '+15559990000')).toHaveLength(12);
    const crossings = results.flatMap((r) => r.crossings.map((c) => c.level));
    expect(crossings.sort()).toEqual([100, 80]);
  });
});
