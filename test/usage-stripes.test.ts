// The usage rollups are striped by connection (migration 015, decision 0017): transactions on two
// connections adding to one account's day never wait for each other, and GET /usage adds the
// stripes up. Shown on the pricing rollup, which the receipts' transactions still write (the status
// counters come from events since decision 0078: test/usage-rollup.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Db } from '../src/db/db.js';
import { openPostgresDb } from '../src/db/postgres-db.js';
import { countPricing, type PricedMessage } from '../src/lifecycle/usage-rollup.js';
import { backend, call, createTenant, type Service, startService, type Tenant } from './support/harness.js';

const stripeOf = async (db: Pick<Db, 'query'>) =>
  Number((await db.query<{ s: number }>('SELECT (pg_backend_pid() % 8) AS s'))[0]!.s);

describe(`usage rollup stripes (${backend})`, () => {
  let svc: Service;
  let t: Tenant;
  const opened: Db[] = [];

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    t = await createTenant(svc.url);
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await svc?.stop();
  });

  /**
   * Two single-connection pools on the test database whose connections write different stripes
   * (a connection on the first one's stripe is closed at once and another one opened).
   */
  async function twoStripes(): Promise<[Db, Db]> {
    const a = await openPostgresDb(svc.database.url!, 1);
    opened.push(a);
    const stripeA = await stripeOf(a);
    for (let i = 0; i < 40; i++) {
      const b = await openPostgresDb(svc.database.url!, 1);
      if ((await stripeOf(b)) !== stripeA) {
        opened.push(b);
        return [a, b];
      }
      await b.close();
    }
    throw new Error('no second stripe among 40 connections');
  }

  const priced = (billable: boolean, n: number): PricedMessage[] =>
    Array.from({ length: n }, () => ({
      customerId: t.customerId,
      accountId: t.accountId,
      sandbox: false,
      at: new Date(),
      pricing: { billable, category: 'utility', pricingModel: 'PMP', type: 'regular' },
    }));

  it('GET /usage adds up what every connection counted', async () => {
    const writers: Pick<Db, 'transaction'>[] = backend === 'postgres' ? await twoStripes() : [svc.db, svc.db];
    await writers[0]!.transaction((tx) => countPricing(tx, priced(true, 3)));
    await writers[1]!.transaction((tx) => countPricing(tx, priced(true, 4)));
    await writers[1]!.transaction((tx) => countPricing(tx, priced(false, 2)));
    const usage = await call(svc.url, 'GET', '/usage', { key: t.key });
    expect(usage.status).toBe(200);
    expect(usage.body.pricing).toMatchObject({ billable: 7, free: 2, unknown: 0 });
    expect(usage.body.pricing.byCategory).toEqual([
      expect.objectContaining({ category: 'utility', billable: 7, free: 2 }),
    ]);
    if (backend === 'postgres') {
      const rows = await svc.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM usage_pricing_daily WHERE chat_account_id = $1 AND billable = 'billable'",
        [t.accountId],
      );
      expect(rows[0]!.n).toBe(2);
    }
  });

  it.skipIf(backend === 'pglite')(
    'an open transaction counting for an account does not hold up another connection counting for it',
    async () => {
      const [a, b] = await twoStripes();
      const before = (await call(svc.url, 'GET', '/usage', { key: t.key })).body.pricing.billable as number;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let counted!: () => void;
      const first = new Promise<void>((r) => (counted = r));
      const open = a.transaction(async (tx) => {
        await countPricing(tx, priced(true, 1));
        counted();
        await held; // uncommitted, its rollup row locked
      });
      await first;
      try {
        // With one row per account and day this waits for the first commit: lock_timeout ends it.
        await b.transaction(async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '1s'");
          await countPricing(tx, priced(true, 1));
        });
      } finally {
        release();
        await open;
      }
      const usage = await call(svc.url, 'GET', '/usage', { key: t.key });
      expect(usage.body.pricing.billable).toBe(before + 2);
    },
  );
});
