// The status counters of GET /usage come from the lifecycle's message.status events (decision
// 0078): a step is read from its event until the rollup adds it to usage_daily, exactly once, and
// a read gives the same counts before and after. The service here is the API role, so no rollup
// runs unless the test runs one; the whole lifecycle's counts are in test/usage.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Db } from '../src/db/db.js';
import { openPostgresDb } from '../src/db/postgres-db.js';
import { messageStatusEvent } from '../src/lifecycle/message-status-event.js';
import { rollUpUsage } from '../src/lifecycle/usage-rollup.js';
import { writeEvents } from '../src/lifecycle/write-events.js';
import { backend, call, createTenant, eventually, type Service, startService, type Tenant } from './support/harness.js';

describe(`usage counted from events (${backend})`, () => {
  let svc: Service;
  let t: Tenant;

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    t = await createTenant(svc.url);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  /** The event of one message's step `from` → `to` at `at`, as the lifecycle writes it. */
  const step = (to: string, at: Date, opts: { sandbox?: boolean; from?: string } = {}) =>
    messageStatusEvent({
      message: {
        id: crypto.randomUUID(),
        customerId: t.customerId,
        externalId: `x-${crypto.randomUUID()}`,
        channel: 'whatsapp',
        recipient: '+15550001111',
        chatAccountId: t.accountId,
        sandbox: opts.sandbox ?? false,
      },
      from: opts.from ?? 'queued',
      to,
      at,
      error: null,
    });

  const usage = async () => {
    const r = await call(svc.url, 'GET', '/usage', { key: t.key });
    expect(r.status).toBe(200);
    return r.body as {
      byDay: { date: string; sent: number; delivered: number; read: number; failed: number }[];
      byAccount: { chatAccountId: string; sent: number; delivered: number; read: number; failed: number }[];
    };
  };
  const rolledUp = async (db: Pick<Db, 'query'>) =>
    (
      await db.query<{ sent: number; delivered: number; read: number; failed: number }>(
        `SELECT coalesce(sum(sent), 0)::int AS sent, coalesce(sum(delivered), 0)::int AS delivered,
                coalesce(sum(read), 0)::int AS read, coalesce(sum(failed), 0)::int AS failed
           FROM usage_daily WHERE customer_id = $1`,
        [t.customerId],
      )
    )[0]!;

  it('counts a step from its event at once, then from usage_daily, exactly once, with the same answer', async () => {
    const now = new Date();
    const today = now.toISOString().slice(0, 10);
    // A step two days back in the month when there is one (a receipt's own time decides the day).
    const earlier = new Date(
      Math.max(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), now.getTime() - 2 * 86400_000),
    );
    const earlierDay = earlier.toISOString().slice(0, 10);
    await svc.db.transaction((tx) =>
      writeEvents(tx, [
        step('sent', now),
        step('sent', now),
        step('delivered', now, { from: 'sent' }),
        step('read', earlier, { from: 'delivered' }),
        step('failed', now),
        step('sent', now, { sandbox: true }), // a sandbox message never counts
        step('queued', now, { from: 'pending' }), // not a counted status
      ]),
    );
    const before = await usage();
    const sum = (rows: { sent: number; delivered: number; read: number; failed: number }[]) =>
      rows.reduce(
        (a, r) => ({
          sent: a.sent + r.sent,
          delivered: a.delivered + r.delivered,
          read: a.read + r.read,
          failed: a.failed + r.failed,
        }),
        { sent: 0, delivered: 0, read: 0, failed: 0 },
      );
    expect(sum(before.byDay)).toEqual({ sent: 2, delivered: 1, read: 1, failed: 1 });
    expect(before.byDay.find((d) => d.date === earlierDay)).toMatchObject({ read: 1 });
    expect(before.byDay.find((d) => d.date === today)).toMatchObject({ sent: 2, delivered: 1, failed: 1 });
    expect(before.byAccount).toEqual([
      expect.objectContaining({ chatAccountId: t.accountId, sent: 2, delivered: 1, read: 1, failed: 1 }),
    ]);
    // Nothing was written to the rollup by the events' transaction.
    expect(await rolledUp(svc.db)).toEqual({ sent: 0, delivered: 0, read: 0, failed: 0 });

    // The rollup passes the steps once every transaction older than theirs has ended (on a shared
    // PostgreSQL another database's transaction counts too): it may take a few tries.
    await eventually(async () => {
      await rollUpUsage(svc.db);
      expect(await rolledUp(svc.db)).toEqual({ sent: 2, delivered: 1, read: 1, failed: 1 });
      return true;
    });
    expect(await usage()).toEqual(before);

    // Rolled up once: another rollup adds nothing of these, and the read stays the same.
    await rollUpUsage(svc.db);
    expect(await rolledUp(svc.db)).toEqual({ sent: 2, delivered: 1, read: 1, failed: 1 });
    expect(await usage()).toEqual(before);
  });

  it.skipIf(backend === 'pglite')(
    'a step of a transaction still open is left for a later rollup, never lost or counted twice',
    async () => {
      const start = await rolledUp(svc.db);
      const read = sumOf(await usage());
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let written!: () => void;
      const inserted = new Promise<void>((r) => (written = r));
      // The open transaction takes its id first, so every later one is above it.
      const open = svc.db.transaction(async (tx) => {
        await writeEvents(tx, [step('delivered', new Date(), { from: 'sent' })]);
        written();
        await held;
      });
      await inserted;
      try {
        // A later transaction's step, committed while the first is open.
        await svc.db.transaction((tx) => writeEvents(tx, [step('sent', new Date())]));
        await rollUpUsage(svc.db);
        // Neither is rolled up: the watermark stops below the open transaction.
        expect(await rolledUp(svc.db)).toEqual(start);
        expect(sumOf(await usage())).toEqual({ sent: read.sent + 1, delivered: read.delivered });
      } finally {
        release();
        await open;
      }
      expect(sumOf(await usage())).toEqual({ sent: read.sent + 1, delivered: read.delivered + 1 });
      await eventually(async () => {
        await rollUpUsage(svc.db);
        expect(await rolledUp(svc.db)).toEqual({ ...start, sent: start.sent + 1, delivered: start.delivered + 1 });
        return true;
      });
      await rollUpUsage(svc.db);
      expect(await rolledUp(svc.db)).toEqual({ ...start, sent: start.sent + 1, delivered: start.delivered + 1 });
      expect(sumOf(await usage())).toEqual({ sent: read.sent + 1, delivered: read.delivered + 1 });
    },
  );

  it.skipIf(backend === 'pglite')(
    'a transaction left open in another database on the same server does not hold the rollup back',
    async () => {
      const other = new URL(svc.database.url!);
      other.pathname = '/postgres';
      const elsewhere = await openPostgresDb(other.toString(), 1);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let begun!: () => void;
      const open = new Promise<void>((r) => (begun = r));
      const running = elsewhere.transaction(async (tx) => {
        await tx.query('SELECT pg_current_xact_id()'); // takes an id, older than the step below
        begun();
        await held;
      });
      try {
        await open;
        const start = await rolledUp(svc.db);
        await svc.db.transaction((tx) => writeEvents(tx, [step('read', new Date(), { from: 'delivered' })]));
        await eventually(async () => {
          await rollUpUsage(svc.db);
          expect(await rolledUp(svc.db)).toEqual({ ...start, read: start.read + 1 });
          return true;
        });
      } finally {
        release();
        await running;
        await elsewhere.close();
      }
    },
  );

  function sumOf(u: { byAccount: { sent: number; delivered: number; read: number; failed: number }[] }) {
    return u.byAccount.reduce((a, r) => ({ sent: a.sent + r.sent, delivered: a.delivered + r.delivered }), {
      sent: 0,
      delivered: 0,
    });
  }
});
