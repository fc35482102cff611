import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, eventually, type Service, startService, textMessage } from './support/harness.js';

type Event = { id: string; type: string; data: Record<string, unknown>; created_at: Date };

describe('sandbox cycles', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService();
    t = await createTenant(svc.url, { plan: 'basic' });
  });
  afterAll(() => svc.stop());

  const sendTo = async (externalId: string, phone: string, key = t.sandboxKey) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key,
      body: { ...textMessage(externalId), to: { type: 'phone', phoneE164: phone } },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const waitFor = (id: string, status: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).body;
      return m.status === status ? m : undefined;
    });
  const eventsOf = (id: string) =>
    svc.db.query<Event>(
      `SELECT id, type, data, created_at FROM events WHERE data->>'messageId' = $1 ORDER BY created_at, data->>'status'`,
      [id],
    );

  it('…88 goes sent → delivered → read with every timestamp and one event per transition', async () => {
    const id = await sendTo('sb-88', '+15551234588');
    const m = await waitFor(id, 'read');
    expect(m).toMatchObject({ sandbox: true, attemptCount: 1, error: null, lastErrorCode: null });
    expect(m.providerMessageId).toMatch(/^sandbox\./);
    expect(Date.parse(m.sentAt)).toBeLessThanOrEqual(Date.parse(m.deliveredAt));
    expect(Date.parse(m.deliveredAt)).toBeLessThanOrEqual(Date.parse(m.readAt));
    expect(m.failedAt).toBeNull();
    expect(m.processing).toMatchObject({
      queueState: 'done',
      attemptCount: 1,
      nextAttemptAt: null,
      lastAttemptAt: m.sentAt,
    });
    const events = await eventsOf(id);
    expect(events.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['queued', 'sent'],
      ['sent', 'delivered'],
      ['delivered', 'read'],
    ]);
    for (const e of events) {
      expect(e.id).toMatch(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(e.type).toBe('message.status');
      expect(Object.keys(e.data).sort()).toEqual([
        'channel',
        'chatAccountId',
        'error',
        'externalId',
        'messageId',
        'previousStatus',
        'recipient',
        'status',
        'timestamp',
      ]);
      expect(e.data).toMatchObject({
        messageId: id,
        externalId: 'sb-88',
        channel: 'chat_official',
        recipient: '+15551234588',
        chatAccountId: t.accountId,
        error: null,
      });
    }
    expect(events.map((e) => e.data.timestamp)).toEqual([m.sentAt, m.deliveredAt, m.readAt]);
  });

  it('any other ending goes sent → delivered and stops there', async () => {
    const id = await sendTo('sb-00', '+15551234500');
    const m = await waitFor(id, 'delivered');
    // The simulator has decided its last step: nothing is due for this message any more (a step to
    // read would have left it due again, or moved it on to read).
    await eventually(async () => {
      const [row] = await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages WHERE id = $1 AND due_at IS NULL AND locked_by IS NULL',
        [id],
      );
      return row!.n === 1;
    });
    expect((await call(svc.url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).body).toMatchObject({
      status: 'delivered',
      readAt: null,
      deliveredAt: m.deliveredAt,
    });
    expect((await eventsOf(id)).map((e) => e.data.status)).toEqual(['sent', 'delivered']);
  });

  it('…99 fails with SANDBOX_SIMULATED_FAILURE and a failed event carrying the error', async () => {
    const id = await sendTo('sb-99', '+15551234599');
    const m = await waitFor(id, 'failed');
    expect(m).toMatchObject({ lastErrorCode: 'SANDBOX_SIMULATED_FAILURE', sentAt: null, attemptCount: 1 });
    expect(m.error).toEqual({ code: 'SANDBOX_SIMULATED_FAILURE', message: expect.any(String) });
    const events = await eventsOf(id);
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      status: 'failed',
      previousStatus: 'queued',
      timestamp: m.failedAt,
      error: m.error,
    });
  });

  it('never simulates live messages: they go to the provider (unreachable here)', async () => {
    const id = await sendTo('live-1', '+15551234588', t.key);
    const m = await eventually(async () => {
      const r = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      // The attempt's outcome recorded (an attempt counts as it starts, before the provider answers).
      return r.attemptCount >= 1 && r.lastErrorCode !== null ? r : undefined;
    });
    expect(m).toMatchObject({ sandbox: false, lastErrorCode: 'PROVIDER_UNREACHABLE', sentAt: null, deliveredAt: null });
    expect(m.providerMessageId).toBeNull();
    expect((await eventsOf(id)).filter((e) => e.data.status !== 'failed')).toHaveLength(0);
  });
});
