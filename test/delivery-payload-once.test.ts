// Rows per message (issue #26, decision 0046): an event's envelope is stored once, on the event,
// and its deliveries read it from there; an event is purged only once no delivery references it;
// an endpoint's lastSuccessAt is not rewritten for every batch of successes.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate } from '../src/db/migrate.js';
import {
  claimDueDeliveries,
  HEALTH_SUCCESS_GRAIN_MS,
  recordOutcomes,
  updateEndpointHealth,
} from '../src/lifecycle/record-deliveries.js';
import { writeEvents } from '../src/lifecycle/write-events.js';
import { purgeOnce } from '../src/purge/purger.js';
import { deliveryPayload } from '../src/webhooks/delivery-store.js';
import { backend, createTestDatabase, type TestDatabase } from './support/harness.js';

describe(`delivery payload stored once, on the event (${backend})`, () => {
  let database: TestDatabase;
  const customer = crypto.randomUUID();
  const other = crypto.randomUUID();
  const endpoint = crypto.randomUUID();
  const limits = {
    limit: 100,
    leaseSeconds: 60,
    excludedEndpointIds: [],
    rooms: [],
    defaultRoom: 100,
    defaultSlots: 0,
    maxAttempts: 8,
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.db);
    const db = database.db;
    await db.query(`INSERT INTO customers (id, name, plan) VALUES ($1, 'c', 'pro'), ($2, 'o', 'pro')`, [
      customer,
      other,
    ]);
    await db.query(
      `INSERT INTO webhook_endpoints (id, customer_id, url, events, secret_enc) VALUES ($1, $2, 'https://example.com/h', '{message.status}', 'x')`,
      [endpoint, customer],
    );
  });
  afterAll(() => database?.drop());

  it('keeps the envelope on the event only, reads it for the claim and for deliveryPayload, and none for an event without deliveries', async () => {
    const db = database.db;
    const createdAt = new Date('2026-11-26T10:00:00.123Z');
    const data = { messageId: 'm1', status: 'sent', to: { phoneE164: '+15550001111' } };
    const [id] = await db.transaction((tx) =>
      writeEvents(tx, [{ customerId: customer, type: 'message.status', data, createdAt }]),
    );
    const [none] = await db.transaction((tx) =>
      writeEvents(tx, [{ customerId: other, type: 'message.status', data, createdAt }]),
    );
    const envelope = JSON.stringify({ eventId: id, type: 'message.status', createdAt: createdAt.toISOString(), data });

    const events = await db.query<{ id: string; payload: string | null; data: unknown }>(
      'SELECT id, payload, data FROM events WHERE id = ANY($1::text[]) ORDER BY id = $2 DESC',
      [[id, none], id],
    );
    expect(events).toEqual([
      { id, payload: envelope, data },
      { id: none, payload: null, data },
    ]);
    const [delivery] = await db.query<{ id: string; payload: string | null }>(
      'SELECT id, payload FROM webhook_deliveries WHERE event_id = $1',
      [id],
    );
    expect(delivery!.payload).toBeNull();

    expect(await deliveryPayload(db, customer, delivery!.id)).toBe(envelope);
    expect(await deliveryPayload(db, other, delivery!.id)).toBeNull(); // another customer's: not there
    const claimed = await claimDueDeliveries(db, 'w1', limits);
    expect(claimed.map((d) => [d.eventId, d.payload])).toEqual([[id, envelope]]);
  });

  it('still reads the own copy of a delivery written before', async () => {
    const db = database.db;
    const old = crypto.randomUUID();
    await db.query(
      `INSERT INTO webhook_deliveries (id, customer_id, endpoint_id, event_id, event_type, payload, status, next_attempt_at)
       VALUES ($1, $2, $3, 'evt_before', 'message.status', '{"eventId":"evt_before"}', 'pending', now())`,
      [old, customer, endpoint],
    );
    expect(await deliveryPayload(db, customer, old)).toBe('{"eventId":"evt_before"}');
    const claimed = await claimDueDeliveries(db, 'w2', limits);
    expect(claimed.map((d) => d.payload)).toEqual(['{"eventId":"evt_before"}']);
  });

  it('purges an old event only once no delivery references it', async () => {
    const db = database.db;
    await db.query(`UPDATE events SET created_at = now() - interval '31 days'`);
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '31 days'`);
    // Pending deliveries stay, and so do their events; the event without deliveries goes.
    const first = await purgeOnce(db, 3600, true);
    expect(first).toMatchObject({ events: 1, deliveries: 0 });
    await db.query(`UPDATE webhook_deliveries SET status = 'succeeded'`);
    const second = await purgeOnce(db, 3600, true);
    expect(second).toMatchObject({ events: 1, deliveries: 2 });
    expect(await db.query('SELECT id FROM events')).toEqual([]);
  });

  it('records a batch of outcomes even when one delivery was deleted during its POST (its endpoint deleted)', async () => {
    const db = database.db;
    const data = { messageId: 'm-deleted', status: 'sent', to: { phoneE164: '+15550001111' } };
    const [id] = await db.transaction((tx) =>
      writeEvents(tx, [{ customerId: customer, type: 'message.status', data, createdAt: new Date() }]),
    );
    const [delivery] = await db.query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE event_id = $1', [id]);
    await db.query(
      `UPDATE webhook_deliveries SET locked_by = 'w-outcome', locked_until = now() + interval '1 minute' WHERE id = $1`,
      [delivery!.id],
    );
    const gone = crypto.randomUUID(); // a delivery claimed in the same batch, deleted with its endpoint meanwhile
    const post = { statusCode: 200, durationMs: 5, body: 'ok', error: null };
    const at = new Date();
    await recordOutcomes(
      db,
      'w-outcome',
      [delivery!.id, gone].map((d) => ({ id: d, status: 'succeeded' as const, attempts: 1, next: null, code: 200 })),
      [delivery!.id, gone].map((d) => ({ deliveryId: d, at, post })),
      new Map(), // the endpoint's health: the next test's
    );
    const [row] = await db.query<{ status: string; n: number }>(
      `SELECT d.status, (SELECT count(*)::int FROM webhook_attempt_history a WHERE a.delivery_id = d.id) AS n
         FROM webhook_deliveries d WHERE d.id = $1`,
      [delivery!.id],
    );
    expect(row).toEqual({ status: 'succeeded', n: 1 });
  });

  it('moves lastSuccessAt of a healthy endpoint at most once a second, and always after a failure', async () => {
    const db = database.db;
    const read = async () =>
      (
        await db.query<{ s: Date | null; f: Date | null; r: string | null }>(
          'SELECT last_success_at AS s, last_failure_at AS f, last_failure_reason AS r FROM webhook_endpoints WHERE id = $1',
          [endpoint],
        )
      ).map((r) => [r.s?.getTime() ?? null, r.f?.getTime() ?? null, r.r])[0];
    const t0 = Date.parse('2026-11-26T12:00:00.000Z');
    const at = (ms: number) => new Date(t0 + ms);
    const health = (success: Date | null, failure: Date | null = null, reason: string | null = null) =>
      updateEndpointHealth(db, new Map([[endpoint, { success, failure, reason }]]));

    await health(at(0)); // the first success is written
    expect(await read()).toEqual([t0, null, null]);
    await health(at(HEALTH_SUCCESS_GRAIN_MS - 1)); // within the grain: left alone
    expect(await read()).toEqual([t0, null, null]);
    await health(at(HEALTH_SUCCESS_GRAIN_MS)); // a second on: moved
    expect(await read()).toEqual([t0 + HEALTH_SUCCESS_GRAIN_MS, null, null]);
    await health(null, at(HEALTH_SUCCESS_GRAIN_MS + 10), 'HTTP 500'); // a failure: always written
    expect(await read()).toEqual([t0 + HEALTH_SUCCESS_GRAIN_MS, t0 + HEALTH_SUCCESS_GRAIN_MS + 10, 'HTTP 500']);
    await health(at(HEALTH_SUCCESS_GRAIN_MS + 20)); // a success after a failure: always written
    expect(await read()).toEqual([t0 + HEALTH_SUCCESS_GRAIN_MS + 20, t0 + HEALTH_SUCCESS_GRAIN_MS + 10, 'HTTP 500']);
  });
});
