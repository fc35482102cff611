// A delivery taken at its insert (issue #34 item 5, decision 0079): where the process that writes
// an event also runs the deliverer, the deliveries its endpoint has request slots free for are
// written leased to that deliverer with their attempt counted, and POSTed without a claim: two row
// writes each (the insert and the outcome) instead of three. The rest are written as before and
// claimed. Every event still reaches the endpoint once, signed. A trigger of the test's own counts
// each row write of webhook_deliveries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  backend,
  call,
  createTenant,
  eventually,
  type Service,
  startService,
  type Tenant,
  textMessage,
} from './support/harness.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Write = { op: string; id: string; locked: boolean; attempts: number; status: string };

describe(`webhook deliveries taken at their insert (${backend})`, () => {
  let svc: Service;
  let rx: Receiver;
  let t: Tenant;

  beforeAll(async () => {
    svc = await startService({
      env: {
        UNSAFE_ALLOW_PRIVATE_URLS: 'true',
        WORKER_POLL_MS: '50',
        SANDBOX_STEP_MS: '50',
        WEBHOOK_PER_ENDPOINT_CONCURRENCY: '2',
      },
    });
    rx = await startReceiver();
    t = await createTenant(svc.url);
    await svc.db.exec(`
      CREATE TABLE test_delivery_writes (seq serial, op text, id uuid, locked boolean, attempts int, status text);
      CREATE FUNCTION test_count_delivery_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO test_delivery_writes (op, id, locked, attempts, status)
        VALUES (TG_OP, NEW.id, NEW.locked_by IS NOT NULL, NEW.attempt_count, NEW.status);
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_count_delivery_write AFTER INSERT OR UPDATE ON webhook_deliveries
        FOR EACH ROW EXECUTE FUNCTION test_count_delivery_write();`);
  });
  afterAll(async () => {
    await rx?.close();
    await svc?.stop();
  });

  const writesOf = async (endpointId: string) => {
    const rows = await svc.db.query<Write>(
      `SELECT w.op, w.id, w.locked, w.attempts, w.status FROM test_delivery_writes w
         JOIN webhook_deliveries d ON d.id = w.id WHERE d.endpoint_id = $1 ORDER BY w.seq`,
      [endpointId],
    );
    const byDelivery = new Map<string, Write[]>();
    for (const r of rows) byDelivery.set(r.id, [...(byDelivery.get(r.id) ?? []), r]);
    return byDelivery;
  };

  const endpointFor = async (path: string) => {
    const created = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.sandboxKey,
      body: { url: `${rx.url}${path}`, events: ['message.status'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.id as string;
  };

  it('writes a delivery leased with its attempt counted, POSTs it without a claim, and records one outcome', async () => {
    const endpointId = await endpointFor('/one');
    const sent = await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('handoff-1') });
    expect(sent.status).toBe(201);
    // sent and delivered (a sandbox message's cycle), one POST each
    const got = await rx.waitForRequests(2, { filter: (r) => r.path === '/one', timeoutMs: 30_000 });
    expect(new Set(got.map((r) => r.headers['x-svc-event-id'])).size).toBe(2);
    expect(got.map((r) => JSON.parse(r.body.toString()).data.status)).toEqual(['sent', 'delivered']);

    const writes = await eventually(async () => {
      const w = await writesOf(endpointId);
      return [...w.values()].every((d) => d.at(-1)!.status === 'succeeded') && w.size === 2 ? w : undefined;
    });
    for (const d of writes.values())
      expect(d.map((w) => [w.op, w.locked, w.attempts, w.status])).toEqual([
        ['INSERT', true, 1, 'pending'],
        ['UPDATE', false, 1, 'succeeded'],
      ]);
    const listed = await call(svc.url, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { key: t.sandboxKey });
    expect(listed.status).toBe(200);
    expect(
      listed.body.deliveries.map((d: { status: string; attemptCount: number }) => [d.status, d.attemptCount]),
    ).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
  });

  it('hands over no more than the endpoint has request slots free; the others are claimed, and each event arrives once', async () => {
    const endpointId = await endpointFor('/slow');
    rx.handle((r) => (r.path === '/slow' ? { status: 200, body: 'ok', delayMs: 1500 } : undefined));
    const n = 6;
    for (let i = 0; i < n; i++) {
      const sent = await call(svc.url, 'POST', '/messages', {
        key: t.sandboxKey,
        body: textMessage(`handoff-slow-${i}`),
      });
      expect(sent.status).toBe(201);
    }
    const got = await rx.waitForRequests(2 * n, { filter: (r) => r.path === '/slow', timeoutMs: 90_000 });
    const ids = got.map((r) => r.headers['x-svc-event-id']);
    expect(new Set(ids).size).toBe(2 * n);
    const writes = await eventually(async () => {
      const w = await writesOf(endpointId);
      return w.size === 2 * n && [...w.values()].every((d) => d.at(-1)!.status === 'succeeded') ? w : undefined;
    }, 60_000);
    const handed = [...writes.values()].filter((d) => d[0]!.locked);
    const claimed = [...writes.values()].filter((d) => !d[0]!.locked);
    // With two request slots and answers taking 1.5 s, some were taken at their insert and some
    // waited for a claim; a handed one is never claimed again.
    expect(handed.length).toBeGreaterThan(0);
    expect(claimed.length).toBeGreaterThan(0);
    for (const d of handed) expect(d.map((w) => w.op)).toEqual(['INSERT', 'UPDATE']);
    for (const d of claimed) expect(d[0]).toMatchObject({ op: 'INSERT', locked: false, attempts: 0 });
  }, 150_000);
});
