// The transactional outbox: events are written in the transaction of the change that causes them.
// Delivering them to webhook endpoints is the deliverer's job (a later capability).
import crypto from 'node:crypto';
import type { Queryable } from '../db/db.js';
import type { EventType } from '../shared/vocab.js';

export type OutboxEvent = { customerId: string; type: EventType; data: Record<string, unknown>; createdAt: Date };

export const newEventId = () => `evt_${crypto.randomUUID()}`;

export async function writeEvents(tx: Queryable, events: OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  await tx.query(
    `INSERT INTO events (id, customer_id, type, data, created_at)
     SELECT t.id, t.customer_id, t.type, t.data::jsonb, t.created_at
       FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[]) AS t(id, customer_id, type, data, created_at)`,
    [
      events.map(() => newEventId()),
      events.map((e) => e.customerId),
      events.map((e) => e.type),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.createdAt.toISOString()),
    ],
  );
}

/** The spec's envelope, as a receiver gets it. */
export function toEnvelope(row: { id: string; type: string; data: unknown; created_at: Date }) {
  return { eventId: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data };
}
