import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { purgeOnce } from '../src/purge/purger.js';
import { APP_SECRET, providerEnv, resetEmulator, startEmulator } from './support/emulator.js';
import {
  backend,
  call,
  createAccount,
  createKey,
  createTenant,
  createTestDatabase,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';

describe('purger', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { PROVIDER_APP_SECRET: APP_SECRET } });
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

  it('deletes portal sessions past their expiry and shown-once secrets nobody came back for', async () => {
    const c = await createTenant(svc.url, { plan: 'pro' });
    await createPortalUser(svc.url, c.customerId, 'purge-sessions@example.com');
    const portal = new PortalClient(svc.url);
    expect((await portal.login('purge-sessions@example.com')).status).toBe(303);
    const [session] = await svc.db.query<{ id_hash: string }>(
      `SELECT s.id_hash FROM portal_sessions s JOIN portal_users u ON u.id = s.user_id WHERE u.email = $1`,
      ['purge-sessions@example.com'],
    );
    const shown = (id: string, minutes: number) =>
      svc.db.query(
        `INSERT INTO portal_shown_once (id_hash, session_hash, kind, value_enc, expires_at)
         VALUES ($1, $2, 'key.created', 'v2.x', now() + make_interval(mins => $3))`,
        [id, session!.id_hash, minutes],
      );
    await shown('stale', -1);
    await shown('fresh', 5);
    await purgeOnce(svc.db, 3600, true);
    const left = await svc.db.query<{ id_hash: string }>('SELECT id_hash FROM portal_shown_once ORDER BY 1');
    expect(left.map((r) => r.id_hash)).toEqual(['fresh']);
    expect((await portal.request('GET', '/portal')).status).toBe(200); // the live session stays

    await svc.db.query(`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1`, [
      session!.id_hash,
    ]);
    await purgeOnce(svc.db, 3600, true);
    expect(await svc.db.query('SELECT 1 FROM portal_sessions WHERE id_hash = $1', [session!.id_hash])).toHaveLength(0);
    expect(await svc.db.query('SELECT 1 FROM portal_shown_once')).toHaveLength(0);
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
  it('purges inbound content past the plan retention (30 days on Pro), never the sender aggregate', async () => {
    const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Inbox', plan: 'pro' } });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, c.body.id, {
      official: { phoneNumberId, wabaId: 'w', accessToken: 't' },
    });
    const key = await createKey(svc.url, c.body.id, {});
    const day = 86400;
    const now = Math.floor(Date.now() / 1000);
    /** One signed provider webhook: a text from `from`, received `agoSeconds` ago (provider time). */
    const inbound = async (from: string, text: string, agoSeconds: number) => {
      const body = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'w',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { phone_number_id: phoneNumberId },
                  contacts: [{ profile: { name: 'Old Friend' }, wa_id: from }],
                  messages: [
                    {
                      from,
                      id: `wamid.purge${crypto.randomBytes(6).toString('hex')}`,
                      timestamp: String(now - agoSeconds),
                      type: 'text',
                      text: { body: text },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
      const res = await call(svc.url, 'POST', '/provider/webhooks/app', {
        body,
        headers: {
          'x-hub-signature-256': `sha256=${crypto.createHmac('sha256', APP_SECRET).update(body).digest('hex')}`,
        },
      });
      expect(res.status).toBe(200);
    };
    // Just past the 30 days, just inside them, and one of today, from two numbers.
    await inbound('16505550101', 'past retention', 30 * day + 600);
    await inbound('16505550101', 'inside retention', 30 * day - 600);
    await inbound('16505550202', 'only one, past retention', 30 * day + 600);
    const texts = async () =>
      (await call(svc.url, 'GET', `/inbound-messages?chatAccountId=${accountId}`, { key })).body.inboundMessages.map(
        (m: { text: string }) => m.text,
      );
    expect((await texts()).sort()).toEqual(['inside retention', 'only one, past retention', 'past retention']);
    const before = (await call(svc.url, 'GET', '/inbound-senders/%2B16505550101', { key })).body;
    const lonely = (await call(svc.url, 'GET', '/inbound-senders/%2B16505550202', { key })).body;
    expect(before).toMatchObject({ hasWritten: true, inboundCount: 2 });
    expect(Date.parse(before.firstInboundAt)).toBe((now - 30 * day - 600) * 1000);

    const result = await purgeOnce(svc.db, 3600, true);
    expect(result?.inbound).toBe(2);
    expect(await texts()).toEqual(['inside retention']);
    // The aggregate is untouched, even for a number none of whose messages is left.
    expect((await call(svc.url, 'GET', '/inbound-senders/%2B16505550101', { key })).body).toEqual(before);
    expect((await call(svc.url, 'GET', '/inbound-senders/%2B16505550202', { key })).body).toEqual(lonely);
    expect(lonely).toMatchObject({ hasWritten: true, inboundCount: 1 });
  });
});

describe(`purger and a send a worker holds in flight (${backend})`, () => {
  // The spec's lifecycle: a message past its lifetime is deleted in any state, with no event. One
  // whose send is at the provider when the purge comes is gone for good: the send's outcome finds no
  // row (it is not written back, no event, no usage), its receipts are parked and wait to be
  // dropped unmatched, and the worker carries on with the next message.
  it('the purge wins: the outcome of the send in flight writes nothing back, its receipts are parked', async () => {
    const emu = await startEmulator();
    const database = await createTestDatabase();
    const svc = await startService({ database, env: { ...providerEnv(emu), WORKER_POLL_MS: '50' } });
    let running = true;
    try {
      await resetEmulator(emu, { latencyMs: 3000, statuses: ['sent'] });
      await emu.settings({ callbackUrl: `${svc.url}/provider/webhooks/app` });
      const phoneNumberId = `pnpurge${crypto.randomBytes(4).toString('hex')}`;
      const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Flight', plan: 'pro' } });
      await createAccount(svc.url, c.body.id, { official: { phoneNumberId, wabaId: 'w', accessToken: 'tok-flight' } });
      const key = await createKey(svc.url, c.body.id, {});
      const sent = await call(svc.url, 'POST', '/messages', { key, body: textMessage('in-flight') });
      expect(sent.status).toBe(201);
      const id = sent.body.messageId as string;

      // Its attempt is counted as the send starts, before the provider is called: in flight now,
      // and the emulator holds the request for 3 s.
      await eventually(
        async () => {
          const m = (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
          return m.processing?.queueState === 'in_flight' && m.attemptCount === 1;
        },
        15_000,
        10,
      );
      await emu.settings({ latencyMs: 0 }); // the next sends are answered at once
      await svc.db.query(`UPDATE messages SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      // (null: the background purger's pass held the turn at that moment)
      expect(await eventually(() => purgeOnce(svc.db, 3600, true).then((r) => r ?? undefined))).toMatchObject({
        messages: 1,
      });
      expect(emu.sent().filter((s) => s.messageId === id)).toEqual([]); // not answered yet

      // The worker goes on: a message accepted after the purge is sent and recorded.
      const next = await call(svc.url, 'POST', '/messages', { key, body: textMessage('after-purge') });
      await eventually(
        async () => (await call(svc.url, 'GET', `/messages/${next.body.messageId}`, { key })).body.status === 'sent',
        20_000,
        20,
      );
      // The purged send did reach the provider (nothing can call it back)...
      const wamid = (await eventually(async () => emu.sent().find((s) => s.messageId === id), 20_000, 20)).wamid;
      // Its receipt finds no message: parked, to be dropped unmatched after a week.
      const parked = () =>
        database.db.query<{ status: string }>(
          'SELECT status FROM pending_receipts WHERE provider_message_id = $1 ORDER BY id',
          [wamid],
        );
      await eventually(async () => (await parked()).length > 0, 20_000, 20);
      // ...and stopping the service lets every send in flight finish and its outcome be recorded.
      await svc.stop();
      running = false;

      expect(await database.db.query('SELECT 1 FROM messages WHERE id = $1', [id])).toEqual([]);
      const events = await database.db.query<{ message_id: string; status: string }>(
        `SELECT data->>'messageId' AS message_id, data->>'status' AS status FROM events ORDER BY created_at, id`,
      );
      expect(events.filter((e) => e.message_id === id)).toEqual([]);
      expect(events.filter((e) => e.message_id === next.body.messageId).map((e) => e.status)).toEqual(['sent']);
      // Still parked after the send's outcome was recorded (which applies the receipts of its wamid).
      expect((await parked()).map((r) => r.status)).toEqual(['sent']);
      // Usage counts the message that was recorded sent, not the purged one.
      const [usage] = await database.db.query<{ n: number }>(
        `SELECT coalesce(sum(sent), 0)::int AS n FROM usage_daily WHERE customer_id = $1`,
        [c.body.id],
      );
      expect(usage?.n).toBe(1);
    } finally {
      if (running) await svc.stop();
      await database.drop();
      await emu.stop();
    }
  }, 60_000);
});
