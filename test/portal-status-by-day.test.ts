// The overview's "messages created per UTC day and their status now" (src/portal/portal-store.ts),
// on the real database: rows either side of UTC midnight land on their own UTC day, days without
// messages are zeros, rows older than the window and other customers' rows are not counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPortalQueries } from '../src/portal/portal-store.js';
import { createTenant, type Service, startService } from './support/harness.js';

describe('portal overview: status by day', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  async function insert(customerId: string, accountId: string, rows: [string, string][]) {
    for (const [i, [createdAt, status]] of rows.entries())
      await svc.db.query(
        `INSERT INTO messages (id, customer_id, chat_account_id, external_id, payload_hash, recipient, channel, content,
                               metadata, sandbox, status, max_attempts, created_at, expires_at)
         VALUES (gen_random_uuid(), $1, $2, $3, 'h', '+15550001111', 'chat_official', '{"type":"text","text":"hi"}',
                 '{}', false, $4, 5, $5::timestamptz, now() + interval '7 days')`,
        [customerId, accountId, `day-${i}-${Math.random()}`, status, createdAt],
      );
  }

  it('counts each UTC day of the window by status, zeros for quiet days', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const other = await createTenant(svc.url, { plan: 'pro' });
    const now = new Date('2026-03-10T12:00:00Z');
    await insert(t.customerId, t.accountId, [
      ['2026-03-09T23:59:59.999Z', 'delivered'],
      ['2026-03-10T00:00:00Z', 'delivered'],
      ['2026-03-10T00:00:01Z', 'failed'],
      ['2026-02-25T00:00:00Z', 'read'], // the first day of the 14
      ['2026-02-24T23:59:59Z', 'read'], // before the window
    ]);
    await insert(other.customerId, other.accountId, [['2026-03-10T01:00:00Z', 'delivered']]);
    const days = await createPortalQueries(svc.db).statusByDay(t.customerId, 14, now);
    expect(days).toHaveLength(14);
    expect(days[0]).toMatchObject({ day: '2026-02-25', counts: { read: 1, delivered: 0 } });
    expect(days.find((d) => d.day === '2026-03-09')!.counts).toMatchObject({ delivered: 1, failed: 0 });
    expect(days.at(-1)).toMatchObject({ day: '2026-03-10', counts: { delivered: 1, failed: 1, read: 0 } });
    const total = days.reduce((n, d) => n + Object.values(d.counts).reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(4);
  });
});
