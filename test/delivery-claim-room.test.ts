// A delivery claim takes no more of one endpoint's deliveries than its queue in this process can
// take (issue #26): one claimed beyond it was handed straight back, two row writes for nothing.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate } from '../src/db/migrate.js';
import { claimDueDeliveries } from '../src/webhooks/delivery-store.js';
import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

describe(`delivery claims within each endpoint's room (${backend})`, () => {
  let database: TestDatabase;
  const customer = crypto.randomUUID();
  const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.db);
    const db = database.db;
    await db.query(`INSERT INTO customers (id, name, plan) VALUES ($1, 'c', 'pro')`, [customer]);
    for (const e of [a, b, c])
      await db.query(
        `INSERT INTO webhook_endpoints (id, customer_id, url, events, secret_enc) VALUES ($1, $2, 'https://example.com/h', '{message.status}', 'x')`,
        [e, customer],
      );
    // Five due deliveries for each endpoint.
    for (const e of [a, b, c])
      for (let i = 0; i < 5; i++)
        await db.query(
          `INSERT INTO webhook_deliveries (id, customer_id, endpoint_id, event_id, event_type, payload, status, next_attempt_at)
           VALUES (gen_random_uuid(), $1, $2, $3, 'message.status', '{}', 'pending', now() - make_interval(secs => $4))`,
          [customer, e, `evt_${crypto.randomUUID()}`, 100 - i],
        );
  });
  afterAll(() => database?.drop());

  const byEndpoint = (rows: { endpointId: string }[]) => {
    const n = new Map<string, number>();
    for (const r of rows) n.set(r.endpointId, (n.get(r.endpointId) ?? 0) + 1);
    return n;
  };

  it('takes at most each endpoint room, the default for the others, none of the excluded', async () => {
    const claimed = await claimDueDeliveries(database.db, 'w1', 100, 60, [c], [{ endpointId: a, room: 2 }], 3);
    const n = byEndpoint(claimed);
    expect([n.get(a), n.get(b), n.get(c)]).toEqual([2, 3, undefined]);
    // The oldest of each endpoint, and every one claimed is leased to this worker.
    const leased = await database.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE locked_by = 'w1'`,
    );
    expect(leased[0]!.n).toBe(5);
  });

  it('leaves the rest claimable', async () => {
    const claimed = await claimDueDeliveries(database.db, 'w2', 100, 60, []);
    const n = byEndpoint(claimed);
    expect([n.get(a), n.get(b), n.get(c)]).toEqual([3, 2, 5]);
  });
});
