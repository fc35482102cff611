import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { quotaMonth } from '../src/plans/plans.js';
import { call, createTenant, type Service, startService, textMessage } from './support/harness.js';

describe('monthly quota', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  const setUsed = async (customerId: string, used: number) => {
    await svc.db.query(
      `INSERT INTO quota_usage (customer_id, month, used) VALUES ($1, $2::date, $3)
       ON CONFLICT (customer_id, month) DO UPDATE SET used = EXCLUDED.used`,
      [customerId, quotaMonth(new Date()).month, used],
    );
  };

  it('never overshoots with 50 parallel requests at the edge', async () => {
    const t = await createTenant(svc.url, { plan: 'free' });
    await setUsed(t.customerId, 490);
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage(`edge-${i}`) }),
      ),
    );
    const created = replies.filter((r) => r.status === 201);
    const refused = replies.filter((r) => r.status === 429);
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(40);
    const { resetsAt } = quotaMonth(new Date());
    for (const r of refused) {
      expect(r.body).toEqual({ error: 'quota_exceeded', limit: 500, used: 500, resetsAt });
      expect(r.headers.get('retry-after')).toBeNull();
    }
    const [row] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE customer_id = $1', [
      t.customerId,
    ]);
    expect(row!.n).toBe(10);
    expect((await call(svc.url, 'GET', `/admin/customers/${t.customerId}`, { admin: true })).body.usage).toMatchObject({
      used: 500,
      limit: 500,
    });
  });

  it('leaves sandbox sends out of the quota', async () => {
    const t = await createTenant(svc.url, { plan: 'free' });
    await setUsed(t.customerId, 500);
    expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('live') })).status).toBe(429);
    expect((await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('sandbox') })).status).toBe(
      201,
    );
    expect((await call(svc.url, 'GET', `/admin/customers/${t.customerId}`, { admin: true })).body.usage.used).toBe(500);
  });

  it('uses the plan limit of each plan and renews on the first of the next UTC month', async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    await setUsed(t.customerId, 2000);
    const res = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('over') });
    expect(res.body).toMatchObject({ error: 'quota_exceeded', limit: 2000, used: 2000 });
    expect(res.body.resetsAt).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    // Last month's usage does not count this month.
    await svc.db.query('UPDATE quota_usage SET month = $2::date WHERE customer_id = $1', [t.customerId, '2000-01-01']);
    expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('fresh') })).status).toBe(201);
  });

  it('applies a plan upgrade at once', async () => {
    const t = await createTenant(svc.url, { plan: 'free' });
    await setUsed(t.customerId, 500);
    expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('a') })).status).toBe(429);
    await call(svc.url, 'PATCH', `/admin/customers/${t.customerId}`, { admin: true, body: { plan: 'basic' } });
    expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('a') })).status).toBe(201);
  });
});

describe('quotaMonth', () => {
  it('computes the UTC month and the next reset', () => {
    expect(quotaMonth(new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      month: '2026-12-01',
      resetsAt: '2027-01-01T00:00:00.000Z',
    });
    expect(quotaMonth(new Date('2026-02-01T00:00:00.000Z'))).toEqual({
      month: '2026-02-01',
      resetsAt: '2026-03-01T00:00:00.000Z',
    });
  });
});
