// The event stream's tables (decision 0072): its leases in event_streams (one row per open stream,
// the per-customer limit across API processes) and its reads of the outbox's `events`, which it
// never writes. What a stream reads is what a webhook endpoint of the same key would get: a live
// key every event of its customer, a sandbox key only the events of sandbox messages
// (decision 0024-sandbox-keys); `webhook.test` is one endpoint's own and never streamed.
import crypto from 'node:crypto';

import type { Db } from '../db/db.js';
import { envelopeJson } from '../events/outbox.js';

/** An event as the stream sends it: its id (the SSE id) and the webhook envelope (the SSE data). */
export type StreamedEvent = { id: string; type: string; createdAt: Date; envelope: string };

/** Where a stream is in the events: after this (created_at, id). */
export type StreamCursor = { createdAt: Date; id: string };

/** A lease not renewed for this long belongs to a stream whose process died. */
export const STALE_LEASE_SECONDS = 60;

/**
 * Takes a lease for a new stream when the customer has fewer than `limit` live ones (an advisory
 * lock per customer orders concurrent opens, on any process); null when the limit is reached.
 * Stale leases of the customer are deleted on the way.
 */
export async function takeLease(
  db: Db,
  owner: { customerId: string; sandbox: boolean },
  limit: number,
): Promise<string | null> {
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('event_streams'), hashtext($1))", [owner.customerId]);
    await tx.query('DELETE FROM event_streams WHERE customer_id = $1 AND seen_at < now() - make_interval(secs => $2)', [
      owner.customerId,
      STALE_LEASE_SECONDS,
    ]);
    const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM event_streams WHERE customer_id = $1',
      [owner.customerId],
    );
    if (n >= limit) return null;
    const id = crypto.randomUUID();
    await tx.query('INSERT INTO event_streams (id, customer_id, sandbox) VALUES ($1, $2, $3)', [
      id,
      owner.customerId,
      owner.sandbox,
    ]);
    return id;
  });
}

export async function renewLease(db: Pick<Db, 'query'>, id: string): Promise<void> {
  await db.query('UPDATE event_streams SET seen_at = now() WHERE id = $1', [id]);
}

export async function dropLease(db: Pick<Db, 'query'>, id: string): Promise<void> {
  await db.query('DELETE FROM event_streams WHERE id = $1', [id]);
}

/** Where a new stream starts: the database's now (events from then on), minus nothing. */
export async function startCursor(db: Pick<Db, 'query'>): Promise<StreamCursor> {
  const [row] = await db.query<{ now: Date }>('SELECT now() AS now');
  return { createdAt: row!.now, id: '' };
}

/** The cursor of a customer's event (Last-Event-ID); null when it is not the customer's, or is gone. */
export async function cursorOf(
  db: Pick<Db, 'query'>,
  customerId: string,
  eventId: string,
): Promise<StreamCursor | null> {
  const [row] = await db.query<{ created_at: Date }>(
    'SELECT created_at FROM events WHERE id = $1 AND customer_id = $2',
    [eventId, customerId],
  );
  return row ? { createdAt: row.created_at, id: eventId } : null;
}

/**
 * The customer's events after `after`, oldest first, at most `limit`, among those created at
 * least `settleMs` ago by the database's clock: an event is read once the transaction that wrote
 * it has had time to commit, so a later page never finds one that an earlier page passed.
 */
export async function eventsAfter(
  db: Pick<Db, 'query'>,
  owner: { customerId: string; sandbox: boolean },
  after: StreamCursor,
  opts: { limit: number; settleMs: number },
): Promise<StreamedEvent[]> {
  const rows = await db.query<{ id: string; type: string; created_at: Date; data: unknown; payload: string | null }>(
    `SELECT e.id, e.type, e.created_at, e.data, e.payload
       FROM events e
      WHERE e.created_at >= $2 AND (e.created_at, e.id) > ($2::timestamptz, $3::text)
        AND e.created_at <= now() - make_interval(secs => $5::float8 / 1000)
        AND e.customer_id = $1 AND e.type <> 'webhook.test'
        AND (NOT $4::boolean OR CASE WHEN e.type = 'message.status' THEN EXISTS (
              SELECT 1 FROM messages m
               WHERE m.id = (e.data ->> 'messageId')::uuid AND m.customer_id = e.customer_id AND m.sandbox)
             ELSE false END)
      ORDER BY e.created_at, e.id
      LIMIT $6`,
    [owner.customerId, after.createdAt, after.id, owner.sandbox, opts.settleMs, opts.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    createdAt: r.created_at,
    // The envelope a delivery carries when the event has one; else the same envelope made again.
    envelope: r.payload ?? envelopeJson(r.id, r.type, r.created_at, r.data),
  }));
}
