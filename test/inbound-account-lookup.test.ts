// Routing a provider webhook to its account (receipts and inbound messages): concurrent look-ups
// of one route share one query (issue #26: when the cache entry expired under load, every receipt
// arriving meanwhile sent its own).
import crypto from 'node:crypto';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { createInboundService } from '../src/inbound/inbound-service.js';
import { createMetrics } from '../src/metrics/metrics.js';
import { createOutboundClient } from '../src/outbound/outbound-client.js';
import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

describe(`inbound account look-ups (${backend})`, () => {
  let database: TestDatabase;
  const customer = crypto.randomUUID();
  const account = crypto.randomUUID();
  const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
  const client = createOutboundClient({ allowPrivate: false });

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.db);
    await database.db.query(`INSERT INTO customers (id, name, plan) VALUES ($1, 'c', 'pro')`, [customer]);
    await database.db.query(
      `INSERT INTO chat_accounts (id, customer_id, type, status, phone_number, display_name, phone_number_id)
       VALUES ($1, $2, 'OFFICIAL', 'CONNECTED', '+15550000001', 'a', $3)`,
      [account, customer, phoneNumberId],
    );
  });
  afterAll(async () => {
    await client.close();
    await database?.drop();
  });

  /** The database as the service sees it, counting the account look-ups it is sent. */
  function counting(db: Db) {
    const seen = { lookups: 0 };
    const counted: Db = {
      ...db,
      query: (text, params) => {
        if (text.includes('FROM chat_accounts a JOIN customers c')) seen.lookups++;
        return db.query(text, params);
      },
    };
    return { counted, seen };
  }

  it('sends one query for concurrent look-ups of one route, and answers each of them', async () => {
    const { counted, seen } = counting(database.db);
    const inbound = createInboundService({
      db: counted,
      log: pino({ level: 'silent' }),
      client,
      metrics: createMetrics(),
    });
    const found = await Promise.all(
      Array.from({ length: 20 }, () => inbound.account({ phoneNumberId, integrationId: null })),
    );
    expect(seen.lookups).toBe(1);
    expect(found.every((a) => a?.id === account && a.customerId === customer && a.plan === 'pro')).toBe(true);
    // Then from the cache; an unknown route is null, looked up again next time (not cached).
    await inbound.account({ phoneNumberId, integrationId: null });
    expect(seen.lookups).toBe(1);
    const unknown = await Promise.all(
      [1, 2, 3].map(() => inbound.account({ phoneNumberId: 'nope', integrationId: null })),
    );
    expect(unknown).toEqual([null, null, null]);
    expect(seen.lookups).toBe(2);
    await inbound.account({ phoneNumberId: 'nope', integrationId: null });
    expect(seen.lookups).toBe(3);
  });

  it('lets a failed look-up fail its callers only: the next one queries again', async () => {
    let fail = true;
    const db = database.db;
    const flaky: Db = {
      ...db,
      query: (text, params) =>
        fail && text.includes('FROM chat_accounts a JOIN customers c')
          ? Promise.reject(new Error('connection lost'))
          : db.query(text, params),
    };
    const inbound = createInboundService({
      db: flaky,
      log: pino({ level: 'silent' }),
      client,
      metrics: createMetrics(),
    });
    const results = await Promise.allSettled([1, 2].map(() => inbound.account({ id: account })));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect((await inbound.account({ id: account }))?.id).toBe(account);
  });
});
