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

  it('counts and alerts at the assumed default limit (250) but refuses nothing until a limit is set', async () => {
    const { db } = database;
    const alone = crypto.randomUUID();
    const [{ customer_id: customer } = { customer_id: '' }] = await db.query<{ customer_id: string }>(
      'SELECT customer_id FROM chat_accounts WHERE id = $1',
      [accounts[0]],
    );
    await db.query(
      `INSERT INTO chat_accounts (id, customer_id, type, status, phone_number, display_name, phone_number_id, waba_id)
       VALUES ($1, $2, 'OFFICIAL', 'CONNECTED', '+15550100201', 'b', $3, 'w2')`,
      [alone, customer, `pn-alone-${alone}`],
    );
    const starts = Array.from({ length: 260 }, (_, i) => ({
      messageId: crypto.randomUUID(),
      accountId: alone,
      recipient: `+1555700${String(i).padStart(4, '0')}`,
    }));
    const result = await db.transaction((tx) => admitConversationStarts(tx, starts));
    expect(result.refused.size).toBe(0);
    expect(result.crossings.map((c) => [c.level, c.limit, c.source])).toEqual([
      [80, 250, 'default'],
      [100, 250, 'default'],
    ]);
    // Once the limit is known (here the provider's 250), the next new recipient is refused.
    await setMessagingLimit(db, [alone], 250, 'provider');
    const next = { messageId: crypto.randomUUID(), accountId: alone, recipient: '+15557009999' };
    const again = await db.transaction((tx) =>
      admitConversationStarts(tx, [next, { ...starts[0]!, messageId: crypto.randomUUID() }]),
    );
    expect([...again.refused.keys()]).toEqual([next.messageId]);
  });
});
