// Receipts as a batch path: concurrent provider webhooks are group-committed, each answered after
// the commit that applied its receipts; forward-only, one event (and one delivery per endpoint)
// per transition whatever the order, duplicates and batching; receipts that beat the send's own
// commit are applied by that commit (the API role runs no sweep; one test starts the sweep loop itself).
import crypto from 'node:crypto';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { applyParkedReceipts, applyReceipts } from '../src/lifecycle/apply-receipt.js';
import { applyTransitions } from '../src/lifecycle/apply-transitions.js';
import { claimDue, startAttempts } from '../src/lifecycle/claim.js';
import * as transition from '../src/lifecycle/transitions.js';
import { createParkedReceiptSweep } from '../src/receipts/parked-sweep.js';
import {
  backend,
  call,
  createAccount,
  createKey,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';

const SECRET = 'receipt-batches-secret-0123456789';
const STATUSES = ['sent', 'delivered', 'read'] as const;
type Status = (typeof STATUSES)[number] | 'failed';
const RANK: Record<string, number> = { pending: 0, queued: 0, sent: 1, delivered: 2, read: 3, failed: 1 };

describe(`receipt batches (${backend})`, () => {
  let svc: Service;
  let n = 0;
  const worker = 'receipt-batches-test-worker';

  beforeAll(async () => {
    svc = await startService({
      role: 'api',
      env: { PROVIDER_APP_SECRET: SECRET, UNSAFE_ALLOW_PRIVATE_URLS: 'true' },
    });
  });
  afterAll(() => svc?.stop());

  /** A pro customer with one account, and two message.status endpoints (every event: two deliveries). */
  async function tenant() {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Receipts', plan: 'pro' },
    });
    const customerId = customer.body.id as string;
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customerId, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-token' },
    });
    const key = await createKey(svc.url, customerId, {});
    for (const path of ['/a', '/b']) {
      const res = await call(svc.url, 'POST', '/webhook-endpoints', {
        key,
        body: { url: `http://127.0.0.1:9${path}`, events: ['message.status'] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    return { customerId, accountId, phoneNumberId, key };
  }

  /** Accepted messages, claimed by a (pretend) worker whose sends started: queued, leased, attempt counted, no wamid yet. */
  async function queued(key: string, count: number) {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await call(svc.url, 'POST', '/messages', { key, body: textMessage(`rb-${n++}`) });
      expect(res.status).toBe(201);
      ids.push(res.body.messageId as string);
    }
    const claimed = await claimDue(svc.db, worker, 10_000, 60);
    expect(claimed.map((m) => m.id).sort()).toEqual([...ids].sort());
    // The worker counts each attempt as its send starts (decision 0021).
    expect((await startAttempts(svc.db, worker, ids)).size).toBe(ids.length);
    return ids;
  }

  /** The dispatcher's record of the send's answer: `sent` with the wamid, and parked receipts for it, in one transaction. */
  const recordSent = (ms: { id: string; wamid: string }[]) =>
    svc.db.transaction(async (tx) => {
      await applyTransitions(
        tx,
        worker,
        ms.map((m) => transition.countedAtStart(transition.sent({ id: m.id, status: 'queued' }, new Date(), m.wamid))),
      );
      await applyParkedReceipts(
        tx,
        ms.map((m) => m.wamid),
      );
    });

  const wamidOf = () => `wamid.${crypto.randomBytes(12).toString('hex')}`;

  /** Sent messages, with their wamids. */
  async function sentMessages(key: string, count: number) {
    const ms = (await queued(key, count)).map((id) => ({ id, wamid: wamidOf() }));
    await recordSent(ms);
    return ms;
  }

  type Item = { wamid: string; status: Status; at: number; messageId?: string; pricing?: Record<string, unknown> };
  const payload = (phoneNumberId: string, items: Item[]) =>
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'waba',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { phone_number_id: phoneNumberId },
                statuses: items.map((i) => ({
                  id: i.wamid,
                  status: i.status,
                  timestamp: String(i.at),
                  recipient_id: '15551230000',
                  ...(i.messageId ? { biz_opaque_callback_data: i.messageId } : {}),
                  ...(i.pricing ? { pricing: i.pricing } : {}),
                  ...(i.status === 'failed'
                    ? { errors: [{ code: 131026, title: 'Message undeliverable', error_data: { details: 'x' } }] }
                    : {}),
                })),
              },
            },
          ],
        },
      ],
    });
  const post = (phoneNumberId: string, items: Item[]) => {
    const body = payload(phoneNumberId, items);
    const sig = `sha256=${crypto.createHmac('sha256', SECRET).update(body).digest('hex')}`;
    return call(svc.url, 'POST', '/provider/webhooks/app', { body, headers: { 'x-hub-signature-256': sig } });
  };

  const rowOf = async (id: string) =>
    (
      await svc.db.query<{
        status: string;
        sent_at: Date | null;
        delivered_at: Date | null;
        read_at: Date | null;
        failed_at: Date | null;
        error: any;
        provider_message_id: string | null;
        attempt_count: number;
        locked_by: string | null;
      }>(
        `SELECT status, sent_at, delivered_at, read_at, failed_at, error, provider_message_id, attempt_count, locked_by
           FROM messages WHERE id = $1`,
        [id],
      )
    )[0]!;
  const eventsOf = (id: string) =>
    svc.db.query<{ id: string; status: string; previous: string; timestamp: string; xmin: string; deliveries: number }>(
      `SELECT e.id, e.data->>'status' AS status, e.data->>'previousStatus' AS previous, e.data->>'timestamp' AS timestamp,
              e.xmin::text AS xmin, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
         FROM events e WHERE e.type = 'message.status' AND e.data->>'messageId' = $1 ORDER BY e.created_at, e.id`,
      [id],
    );
  /** The events of a message form one forward chain from queued, each once, each with its two deliveries. */
  async function expectChain(id: string, last: string) {
    const events = await eventsOf(id);
    const chain = last === 'failed' ? ['sent', 'failed'] : STATUSES.slice(0, RANK[last]!);
    const byStatus = new Map(events.map((e) => [e.status, e]));
    expect(events.map((e) => e.status).sort()).toEqual([...chain].sort());
    chain.forEach((s, i) => expect(byStatus.get(s)!.previous).toBe(i === 0 ? 'queued' : chain[i - 1]));
    for (const e of events) expect(e.deliveries).toBe(2);
    return events;
  }
  const parkedCount = async (wamids: string[]) =>
    (
      await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pending_receipts WHERE provider_message_id = ANY($1::text[])',
        [wamids],
      )
    )[0]!.n;

  it('applies many concurrent one-status webhooks (any order, duplicates) once each, answering after the commit', async () => {
    const t = await tenant();
    const ms = await sentMessages(t.key, 60);
    const base = 1_790_000_000;
    // Every message gets delivered and read (twice each, shuffled); every fifth also a failed,
    // which applies only when it comes before delivered.
    const items = ms.flatMap((m, i) => {
      const own: Item[] = [
        { wamid: m.wamid, status: 'sent', at: base },
        { wamid: m.wamid, status: 'delivered', at: base + 1 },
        { wamid: m.wamid, status: 'read', at: base + 2 },
      ];
      if (i % 5 === 0) own.push({ wamid: m.wamid, status: 'failed', at: base + 1 });
      return [...own, ...own];
    });
    items.sort(() => Math.random() - 0.5);
    const statusOf = new Map(ms.map((m) => [m.wamid, m.id]));
    // 64 in flight; each answer must come after its receipt's commit.
    let next = 0;
    const lanes = Array.from({ length: 64 }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        const res = await post(t.phoneNumberId, [item]);
        expect(res.status).toBe(200);
        const row = await rowOf(statusOf.get(item.wamid)!);
        // Applied (or made stale by what was applied before): never behind the receipt.
        if (row.status !== 'failed' && item.status !== 'failed')
          expect(RANK[row.status]).toBeGreaterThanOrEqual(RANK[item.status]!);
        if (item.status === 'failed') expect(['failed', 'delivered', 'read']).toContain(row.status);
      }
    });
    await Promise.all(lanes);
    for (const m of ms) {
      const row = await rowOf(m.id);
      expect(['read', 'failed']).toContain(row.status);
      await expectChain(m.id, row.status);
      if (row.status === 'read') {
        expect(row.delivered_at).not.toBeNull();
        expect(row.read_at!.getTime()).toBe((base + 2) * 1000);
      }
    }
    expect(await parkedCount(ms.map((m) => m.wamid))).toBe(0);
  });

  it('applies one payload of read, delivered, sent (and a repeat) to the highest status, one event per step', async () => {
    const t = await tenant();
    const [m] = await sentMessages(t.key, 1);
    const at = 1_790_000_100;
    const items: Item[] = [
      { wamid: m!.wamid, status: 'read', at: at + 2 },
      { wamid: m!.wamid, status: 'delivered', at: at + 1 },
      { wamid: m!.wamid, status: 'sent', at },
      { wamid: m!.wamid, status: 'read', at: at + 2 },
    ];
    expect((await post(t.phoneNumberId, items)).status).toBe(200);
    // The same payload again, sequentially and twice concurrently: nothing more.
    expect((await post(t.phoneNumberId, items)).status).toBe(200);
    const again = await Promise.all([post(t.phoneNumberId, items), post(t.phoneNumberId, items)]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    const row = await rowOf(m!.id);
    expect(row.status).toBe('read');
    // `read` stepped through delivered, with its own time; the later delivered receipt was stale.
    expect(row.delivered_at!.getTime()).toBe((at + 2) * 1000);
    expect(row.read_at!.getTime()).toBe((at + 2) * 1000);
    const events = await expectChain(m!.id, 'read');
    expect(events.filter((e) => e.status !== 'sent').map((e) => e.timestamp)).toEqual([
      new Date((at + 2) * 1000).toISOString(),
      new Date((at + 2) * 1000).toISOString(),
    ]);
  });

  it('applies a batch mixing messages, statuses and a failure in one transaction', async () => {
    const t = await tenant();
    const ms = await sentMessages(t.key, 4);
    const at = 1_790_000_200;
    const receipts = (statuses: Status[], m: { wamid: string }) =>
      statuses.map((status) => ({
        accountId: t.accountId,
        receipt: {
          phoneNumberId: t.phoneNumberId,
          providerMessageId: m.wamid,
          status,
          occurredAt: new Date(at * 1000),
          messageId: null,
          error: status === 'failed' ? { code: 131026, title: 'Undeliverable', details: null } : null,
        },
      }));
    const outcomes = await svc.db.transaction((tx) =>
      applyReceipts(tx, [
        ...receipts(['delivered', 'read', 'delivered'], ms[0]!),
        ...receipts(['failed', 'delivered'], ms[1]!),
        ...receipts(['delivered', 'failed'], ms[2]!),
        ...receipts(['sent'], ms[3]!),
      ]),
    );
    expect(outcomes).toEqual(['applied', 'applied', 'ignored', 'applied', 'ignored', 'applied', 'ignored', 'ignored']);
    expect((await rowOf(ms[0]!.id)).status).toBe('read');
    const failed = await rowOf(ms[1]!.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: expect.any(String) } });
    expect(failed.error.provider).toMatchObject({ code: 131026, source: 'status_webhook' });
    expect((await rowOf(ms[2]!.id)).status).toBe('delivered');
    expect((await rowOf(ms[3]!.id)).status).toBe('sent');
    await expectChain(ms[0]!.id, 'read');
    await expectChain(ms[1]!.id, 'failed');
    await expectChain(ms[2]!.id, 'delivered');
    await expectChain(ms[3]!.id, 'sent');
  });

  it("parks receipts that beat the send's commit, and applies them in that commit (no sweep)", async () => {
    const t = await tenant();
    const ids = await queued(t.key, 3);
    const ms = ids.map((id) => ({ id, wamid: wamidOf() }));
    const at = 1_790_000_300;
    // Before the answer is recorded: by wamid only (no messageId echoed), out of order, repeated.
    const res = await Promise.all(
      ms.map((m) =>
        post(t.phoneNumberId, [
          { wamid: m.wamid, status: 'delivered', at: at + 1 },
          { wamid: m.wamid, status: 'sent', at },
          { wamid: m.wamid, status: 'delivered', at: at + 1 },
        ]),
      ),
    );
    expect(res.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await parkedCount(ms.map((m) => m.wamid))).toBe(9);
    for (const m of ms) expect((await rowOf(m.id)).status).toBe('queued');

    await recordSent(ms);
    expect(await parkedCount(ms.map((m) => m.wamid))).toBe(0);
    for (const m of ms) {
      const row = await rowOf(m.id);
      expect(row).toMatchObject({ status: 'delivered', provider_message_id: m.wamid, locked_by: null });
      expect(row.delivered_at!.getTime()).toBe((at + 1) * 1000);
      const events = await expectChain(m.id, 'delivered');
      // Both events were written by the send's own transaction.
      expect(new Set(events.map((e) => e.xmin)).size).toBe(1);
    }
  });

  it('the parked-receipt sweep, on its own loop, applies receipts a send commit did not pick up', async () => {
    const t = await tenant();
    const ms = (await queued(t.key, 2)).map((id) => ({ id, wamid: wamidOf() }));
    const at = 1_790_000_350;
    for (const m of ms)
      expect((await post(t.phoneNumberId, [{ wamid: m.wamid, status: 'delivered', at }])).status).toBe(200);
    expect(await parkedCount(ms.map((m) => m.wamid))).toBe(2);
    // The sends are recorded without looking at parked receipts: only the sweep can apply them.
    await svc.db.transaction((tx) =>
      applyTransitions(
        tx,
        worker,
        ms.map((m) => transition.countedAtStart(transition.sent({ id: m.id, status: 'queued' }, new Date(), m.wamid))),
      ),
    );
    expect(await parkedCount(ms.map((m) => m.wamid))).toBe(2);
    const sweep = createParkedReceiptSweep({ db: svc.db, log: pino({ level: 'silent' }), intervalMs: 100 });
    await sweep.start();
    try {
      await eventually(async () => (await parkedCount(ms.map((m) => m.wamid))) === 0);
    } finally {
      await sweep.stop();
    }
    for (const m of ms) {
      expect(await rowOf(m.id)).toMatchObject({ status: 'delivered', provider_message_id: m.wamid });
      await expectChain(m.id, 'delivered');
    }
  });

  it('applies receipts echoing our messageId before the wamid is recorded, without parking', async () => {
    const t = await tenant();
    const [id] = await queued(t.key, 1);
    const wamid = wamidOf();
    const at = 1_790_000_400;
    const res = await post(t.phoneNumberId, [{ wamid, status: 'delivered', at, messageId: id! }]);
    expect(res.status).toBe(200);
    expect(await parkedCount([wamid])).toBe(0);
    expect(await rowOf(id!)).toMatchObject({ status: 'delivered', provider_message_id: wamid, attempt_count: 1 });
    // The send's answer, recorded afterwards, changes nothing (the message has left the queue).
    await recordSent([{ id: id!, wamid }]);
    expect((await rowOf(id!)).status).toBe('delivered');
    await expectChain(id!, 'delivered');
  });

  // Two connections racing: only PostgreSQL has them (PGlite runs one transaction at a time).
  describe.skipIf(backend === 'pglite')('the race with the send commit (PostgreSQL)', () => {
    const receiptFor = (accountId: string, wamid: string, status: Status, at: number) => ({
      accountId,
      receipt: {
        phoneNumberId: '',
        providerMessageId: wamid,
        status,
        occurredAt: new Date(at * 1000),
        messageId: null,
        error: null,
      },
    });
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      return { open, opened };
    };

    it('a receipt batch that parks while the send commits is applied by that commit', async () => {
      const t = await tenant();
      const [id] = await queued(t.key, 1);
      const wamid = wamidOf();
      const written = gate();
      const parkedDone = gate();
      // The send's transaction writes the wamid, then waits for the receipt batch to commit its park.
      const send = svc.db.transaction(async (tx) => {
        await applyTransitions(tx, worker, [transition.sent({ id: id!, status: 'queued' }, new Date(), wamid)]);
        written.open();
        await parkedDone.opened;
        await applyParkedReceipts(tx, [wamid]);
      });
      await written.opened;
      const outcomes = await svc.db.transaction((tx) =>
        applyReceipts(tx, [receiptFor(t.accountId, wamid, 'delivered', 1_790_000_500)]),
      );
      expect(outcomes).toEqual(['parked']);
      parkedDone.open();
      await send;
      expect((await rowOf(id!)).status).toBe('delivered');
      expect(await parkedCount([wamid])).toBe(0);
      await expectChain(id!, 'delivered');
    });

    it('a receipt batch that looks while the send holds the wamid waits for it and applies directly', async () => {
      const t = await tenant();
      const [id] = await queued(t.key, 1);
      const wamid = wamidOf();
      const locked = gate();
      const release = gate();
      const send = svc.db.transaction(async (tx) => {
        await applyTransitions(tx, worker, [transition.sent({ id: id!, status: 'queued' }, new Date(), wamid)]);
        await applyParkedReceipts(tx, [wamid]); // takes the wamid's lock; nothing parked yet
        locked.open();
        await release.opened;
      });
      await locked.opened;
      const receipt = svc.db.transaction((tx) =>
        applyReceipts(tx, [receiptFor(t.accountId, wamid, 'read', 1_790_000_600)]),
      );
      // The receipt batch is now waiting on the lock: seen as a lock wait in the server's activity.
      await eventually(
        async () =>
          (
            await svc.db.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).length > 0,
        15_000,
        10,
      );
      release.open();
      await send;
      expect(await receipt).toEqual(['applied']);
      expect((await rowOf(id!)).status).toBe('read');
      expect(await parkedCount([wamid])).toBe(0);
      await expectChain(id!, 'read');
    });
  });

  it('applies the same receipt posted 20 times at once exactly once', async () => {
    const t = await tenant();
    const [m] = await sentMessages(t.key, 1);
    const items: Item[] = [{ wamid: m!.wamid, status: 'delivered', at: 1_790_000_700 }];
    const results = await Promise.all(Array.from({ length: 20 }, () => post(t.phoneNumberId, items)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect((await rowOf(m!.id)).status).toBe('delivered');
    await expectChain(m!.id, 'delivered');
  });

  it('does not rewrite a message a priced receipt leaves unchanged (decision 0054), events each once', async () => {
    const t = await tenant();
    const [m] = await sentMessages(t.key, 1);
    const at = 1_790_000_800;
    const price = { billable: true, pricing_model: 'PMP', type: 'regular', category: 'utility' };
    const state = async () =>
      (
        await svc.db.query<{ xmin: string; status: string; pricing: any; events: number }>(
          `SELECT xmin::text AS xmin, status, pricing,
                  (SELECT count(*)::int FROM events e WHERE e.type = 'message.status' AND e.data->>'messageId' = $1::text) AS events
             FROM messages WHERE id = $1::uuid`,
          [m!.id],
        )
      )[0]!;
    const send = async (items: Item[]) => expect((await post(t.phoneNumberId, items)).status).toBe(200);
    // The `sent` receipt brings the first price: written, no event (the send's outcome emitted sent).
    const before = await state();
    await send([{ wamid: m!.wamid, status: 'sent', at, pricing: price }]);
    const priced = await state();
    expect(priced.xmin).not.toBe(before.xmin);
    expect(priced.pricing).toMatchObject({ category: 'utility', billable: true });
    expect(priced.events).toBe(1);
    // The same receipt redelivered, and a pricing-less one: the row is left alone.
    await send([{ wamid: m!.wamid, status: 'sent', at, pricing: price }]);
    await send([{ wamid: m!.wamid, status: 'sent', at }]);
    expect(await state()).toEqual(priced);
    // delivered with the same price moves the status: written, one event.
    await send([{ wamid: m!.wamid, status: 'delivered', at: at + 1, pricing: price }]);
    const delivered = await state();
    expect(delivered.status).toBe('delivered');
    expect(delivered.xmin).not.toBe(priced.xmin);
    expect(delivered.events).toBe(2);
    // Stale receipts carrying the stored price (a late sent, a repeated delivered, a failed after
    // delivery): nothing written, no event.
    await send([
      { wamid: m!.wamid, status: 'sent', at, pricing: price },
      { wamid: m!.wamid, status: 'delivered', at: at + 1, pricing: { ...price } },
      { wamid: m!.wamid, status: 'failed', at: at + 1, pricing: price },
    ]);
    expect(await state()).toEqual(delivered);
    // A different price is still stored (the last one a receipt carried, decision 0035).
    await send([{ wamid: m!.wamid, status: 'delivered', at: at + 1, pricing: { ...price, category: 'marketing' } }]);
    const repriced = await state();
    expect(repriced.xmin).not.toBe(delivered.xmin);
    expect(repriced.pricing).toMatchObject({ category: 'marketing' });
    await send([{ wamid: m!.wamid, status: 'read', at: at + 2 }]);
    const read = await rowOf(m!.id);
    expect(read.status).toBe('read');
    await expectChain(m!.id, 'read');
  });
});
