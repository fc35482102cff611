// A delivery claim takes no more of one endpoint's deliveries than its queue in this process can
// take (issue #26): one claimed beyond it was handed straight back, two row writes for nothing.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate } from '../src/db/migrate.js';
import { claimDueDeliveries, releaseDeliveries } from '../src/lifecycle/record-deliveries.js';
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

  const limits = {
    limit: 100,
    leaseSeconds: 60,
    excludedEndpointIds: [],
    rooms: [],
    defaultRoom: 100,
    defaultSlots: 0,
    maxAttempts: 8,
  };
  /** The attempt counts of one endpoint's deliveries leased to `worker`, oldest first. */
  const attempts = async (worker: string, endpoint: string) =>
    (
      await database.db.query<{ attempt_count: number }>(
        `SELECT attempt_count FROM webhook_deliveries WHERE locked_by = $1 AND endpoint_id = $2 ORDER BY next_attempt_at`,
        [worker, endpoint],
      )
    ).map((r) => r.attempt_count);

  it('takes at most each endpoint room, the default for the others, none of the excluded', async () => {
    const claimed = await claimDueDeliveries(database.db, 'w1', {
      ...limits,
      excludedEndpointIds: [c],
      rooms: [{ endpointId: a, room: 2, slots: 1 }],
      defaultRoom: 3,
      defaultSlots: 2,
    });
    const n = byEndpoint(claimed);
    expect([n.get(a), n.get(b), n.get(c)]).toEqual([2, 3, undefined]);
    // The oldest of each endpoint within its free slots are counted by the claim (decision 0046):
    // one of a's, two of b's; the claim reports the count before its own.
    const counted = claimed.filter((d) => d.counted);
    expect(byEndpoint(counted)).toEqual(
      new Map([
        [a, 1],
        [b, 2],
      ]),
    );
    expect(claimed.every((d) => d.attemptCount === 0)).toBe(true);
    expect([await attempts('w1', a), await attempts('w1', b)]).toEqual([
      [1, 0],
      [1, 1, 0],
    ]);
    // The oldest of each endpoint, and every one claimed is leased to this worker.
    const leased = await database.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE locked_by = 'w1'`,
    );
    expect(leased[0]!.n).toBe(5);
  });

  it('leaves the rest claimable', async () => {
    const claimed = await claimDueDeliveries(database.db, 'w2', limits);
    const n = byEndpoint(claimed);
    expect([n.get(a), n.get(b), n.get(c)]).toEqual([3, 2, 5]);
    // No free slot: nothing counted (the POST's start counts it, decision 0021).
    expect(claimed.some((d) => d.counted)).toBe(false);
  });

  it('counts no attempt on a delivery with every attempt used, and gives back the count of one released', async () => {
    const db = database.db;
    await db.query(`UPDATE webhook_deliveries SET locked_by = NULL, locked_until = NULL WHERE endpoint_id = $1`, [c]);
    await db.query(
      `UPDATE webhook_deliveries SET attempt_count = 8 WHERE id = (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY next_attempt_at LIMIT 1)`,
      [c],
    );
    const claimed = await claimDueDeliveries(db, 'w3', { ...limits, defaultSlots: 2 });
    expect(claimed.map((d) => [d.attemptCount, d.counted]).sort()).toEqual(
      [
        [0, false],
        [0, false],
        [0, false],
        [0, true],
        [8, false],
      ].sort(),
    );
    expect(await attempts('w3', c)).toEqual([8, 1, 0, 0, 0]);
    const counted = claimed.filter((d) => d.counted).map((d) => d.id);
    await releaseDeliveries(db, 'w3', claimed);
    const [row] = await db.query<{ attempt_count: number; locked_by: string | null }>(
      'SELECT attempt_count, locked_by FROM webhook_deliveries WHERE id = $1',
      [counted[0]],
    );
    expect(row).toEqual({ attempt_count: 0, locked_by: null });
  });
});
