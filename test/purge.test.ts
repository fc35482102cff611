import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { purgeOnce } from '../src/purge/purger.js';
import { call, createTenant, type Service, startService, textMessage } from './support/harness.js';

describe('purger', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    t = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(() => svc.stop());

  it('deletes messages past their lifetime; they read as 404 and their externalId is reusable', async () => {
    const old = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('purge-me') });
    const kept = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('keep-me') });
    await svc.db.query(`UPDATE messages SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      old.body.messageId,
    ]);
    await svc.db.query(
      `INSERT INTO events (id, customer_id, type, data, created_at) VALUES ('evt_old', $1, 'message.status', '{}', now() - interval '31 days')`,
      [t.customerId],
    );

    const result = await purgeOnce(svc.db, 3600, true);
    expect(result).toEqual({ messages: 1, broadcasts: 0, events: 1, receipts: 0, deliveries: 0, inbound: 0, media: 0 });
    expect(await call(svc.url, 'GET', `/messages/${old.body.messageId}`, { key: t.key })).toMatchObject({
      status: 404,
      body: { error: 'message_not_found' },
    });
    expect(await call(svc.url, 'GET', '/messages/purge-me', { key: t.key })).toMatchObject({
      status: 404,
      body: { error: 'message_not_found' },
    });
    expect((await call(svc.url, 'GET', `/messages/${kept.body.messageId}`, { key: t.key })).status).toBe(200);

    const reused = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: textMessage('purge-me', { content: { type: 'text', text: 'a new payload' } }),
    });
    expect(reused.status).toBe(201);
    expect(reused.body.messageId).not.toBe(old.body.messageId);
  });

  it('runs once per interval across processes, one at a time', async () => {
    await purgeOnce(svc.db, 3600, true);
    expect(await purgeOnce(svc.db, 3600)).toBeNull(); // ran just now: not this process's turn
    await svc.db.query(`UPDATE purge_runs SET last_run_at = now() - interval '2 hours'`);
    const concurrent = await Promise.all([purgeOnce(svc.db, 3600), purgeOnce(svc.db, 3600), purgeOnce(svc.db, 3600)]);
    expect(concurrent.filter((r) => r !== null)).toHaveLength(1);
  });

  it('re-clips stored lifetimes when the plan shrinks its retention', async () => {
    const c = await createTenant(svc.url, { plan: 'pro' });
    const res = await call(svc.url, 'POST', '/messages', {
      key: c.key,
      body: textMessage('long', { ttlSeconds: 20 * 86400 }),
    });
    await call(svc.url, 'PATCH', `/admin/customers/${c.customerId}`, { admin: true, body: { plan: 'free' } });
    const m = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: c.key })).body;
    expect((Date.parse(m.expiresAt) - Date.parse(m.createdAt)) / 1000).toBe(3 * 86400);
  });
});
