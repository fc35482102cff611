// A send that reached the provider is never sent again because of our own faults (decision 0061):
// a provider slower than our timeout, a burst that waits for a pool connection, an outcome that
// could not be written. The emulator counts what it accepted per message (our id in each send).
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service, textMessage } from './support/harness.js';

describe('sending once despite our own faults', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let n = 0;
  const ext = () => `once-${n++}`;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({
      // A short response deadline, a pool of two connections, and a short lease (15 s: sends may
      // wait 10 s for a connection) so that an outcome kept past it shows the lease being extended.
      // RETRY_TIME_SCALE (0.001) makes the wait for an unconfirmed send's receipt
      // (SEND_CONFIRM_WAIT_MS, 10 minutes) 600 ms.
      PROVIDER_TIMEOUT_MS: '3000',
      PROVIDER_CONNECTIONS: '2',
      WORKER_LEASE_SECONDS: '15',
    }));
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu));

  const tenant = async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Once', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-once-token' },
    });
    return { phoneNumberId, key: await createKey(svc.url, customer.body.id, {}) };
  };
  const send = async (key: string, to = '+15551230000') => {
    const res = await call(svc.url, 'POST', '/messages', {
      key,
      body: textMessage(ext(), { to: { type: 'phone', phoneE164: to } }),
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  const message = async (key: string, id: string) => (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
  const waitFor = (key: string, id: string, statuses: string[], timeoutMs = 20_000) =>
    eventually(async () => {
      const m = await message(key, id);
      return statuses.includes(m.status) ? m : undefined;
    }, timeoutMs);

  it('a send the provider answers after our timeout is not sent again: with no receipt it fails PROVIDER_TIMEOUT', async () => {
    const t = await tenant();
    await emu.settings({ enabled: false }); // no receipts: nothing confirms the send
    await emu.rule({ phoneNumberId: t.phoneNumberId, answerAfterMs: 4000 });
    const id = await send(t.key);
    const m = await waitFor(t.key, id, ['failed', 'sent', 'delivered']);
    expect(m).toMatchObject({
      status: 'failed',
      attemptCount: 1,
      lastErrorCode: 'PROVIDER_TIMEOUT',
      error: { code: 'PROVIDER_TIMEOUT' },
    });
    expect(m.error.message).toMatch(/not sent again/);
    expect(emu.sendsOf(id)).toBe(1);
  });

  it('a send the provider answers after our timeout is confirmed by its receipt, sent once', async () => {
    const t = await tenant();
    await emu.rule({ phoneNumberId: t.phoneNumberId, answerAfterMs: 4000 });
    const id = await send(t.key);
    const m = await waitFor(t.key, id, ['delivered', 'failed']);
    expect(m).toMatchObject({ status: 'delivered', attemptCount: 1, error: null });
    expect(m.providerMessageId).toBe(emu.sent().find((s) => s.messageId === id)!.wamid);
    expect(emu.sendsOf(id)).toBe(1);
  });

  it('a burst beyond the connection pool waits for connections without timing out, each message sent once', async () => {
    const t = await tenant();
    // Each answer takes 500 ms over two connections: the last of 20 sends waits about 4.5 s for a
    // connection, past the 3 s response deadline, which starts only once it has one.
    await emu.settings({ latencyMs: 500 });
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(t.key, `+1555124${String(i).padStart(4, '0')}`)),
    );
    // One query for all of them (20 pollers would load the service they measure).
    await eventually(
      async () => {
        const [r] = await svc.db.query<{ open: number }>(
          `SELECT count(*)::int AS open FROM messages WHERE id = ANY($1::uuid[]) AND status IN ('pending', 'queued')`,
          [ids],
        );
        return r!.open === 0;
      },
      60_000,
      200,
    );
    const done = await Promise.all(ids.map((id) => message(t.key, id)));
    expect(done.map((m) => m.lastErrorCode).filter((c) => c !== null)).toEqual([]);
    expect(done.map((m) => m.attemptCount)).toEqual(ids.map(() => 1));
    expect(emu.duplicates()).toEqual([]);
    expect(ids.map((id) => emu.sendsOf(id))).toEqual(ids.map(() => 1));
  }, 90_000);

  it('an outcome that cannot be written is kept, its lease extended past its end, and written later: sent once', async () => {
    const t = await tenant();
    const to = `+1555125${crypto.randomInt(1000, 9999)}`;
    await emu.settings({ enabled: false }); // the send's own answer records it, no receipt
    // A real failure of the outcome's write: this recipient's message leaving the queue raises
    // until the row in send_once_faults is deleted (claims, attempts and lease extensions still write).
    await svc.db.exec(`
      CREATE TABLE IF NOT EXISTS send_once_faults (recipient text PRIMARY KEY);
      CREATE OR REPLACE FUNCTION send_once_fault() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status NOT IN ('pending', 'queued')
           AND EXISTS (SELECT 1 FROM send_once_faults f WHERE f.recipient = NEW.recipient) THEN
          RAISE EXCEPTION 'outcome write refused (test fault)';
        END IF;
        RETURN NEW;
      END $$;
      DROP TRIGGER IF EXISTS send_once_fault ON messages;
      CREATE TRIGGER send_once_fault BEFORE UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION send_once_fault();
    `);
    await svc.db.query('INSERT INTO send_once_faults (recipient) VALUES ($1)', [to]);
    try {
      const id = await send(t.key, to);
      await eventually(async () => emu.sendsOf(id) === 1, 20_000);
      // The lease it was sent under: wait (on the database's clock) until it is a second past.
      const [first] = await svc.db.query<{ until: string }>(
        'SELECT locked_until::text AS until FROM messages WHERE id = $1',
        [id],
      );
      await eventually(async () => {
        const [r] = await svc.db.query<{ past: boolean }>(
          "SELECT now() > $1::timestamptz + interval '1 second' AS past",
          [first!.until],
        );
        return r!.past;
      }, 20_000);
      // Still held by the worker that sent it, its lease extended, still queued: nobody sent it again.
      const [held] = await svc.db.query<{ status: string; held: boolean }>(
        'SELECT status, locked_by IS NOT NULL AND locked_until > now() AS held FROM messages WHERE id = $1',
        [id],
      );
      expect(held).toEqual({ status: 'queued', held: true });
      await svc.db.query('DELETE FROM send_once_faults WHERE recipient = $1', [to]);
      const m = await waitFor(t.key, id, ['sent', 'delivered', 'failed']);
      expect(m).toMatchObject({ status: 'sent', attemptCount: 1, error: null });
      expect(emu.sendsOf(id)).toBe(1);
    } finally {
      await svc.db.query('DELETE FROM send_once_faults WHERE recipient = $1', [to]);
    }
  }, 60_000);
});
