// The purge pass's end of events and their deliveries (purge/purger.ts runs it, after the
// messages): delivery history lives as long as the events it delivered.
import { deleteInChunks } from '../db/chunked.js';
import type { Db } from '../db/db.js';

/** Events outlive nothing they describe: the longest message retention is 30 days. */
const EVENT_RETENTION_DAYS = 30;

/** Deletes the finished deliveries past the events' retention, a chunk per statement; returns how many. */
export const purgeDeliveries = (db: Pick<Db, 'query'>, chunk: number): Promise<number> =>
  deleteInChunks(
    db,
    `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < now() - interval '${EVENT_RETENTION_DAYS} days' AND status <> 'pending' LIMIT $1) RETURNING id`,
    chunk,
  );

/**
 * Deletes the events past their retention that no delivery references, a chunk per statement: an
 * event's envelope is the body of its deliveries (decision 0046), so one still pending or
 * redelivered keeps it; so does a usage step not rolled up yet (its count is read from the event,
 * decision 0078). Returns how many.
 */
export const purgeEvents = (db: Pick<Db, 'query'>, chunk: number): Promise<number> =>
  deleteInChunks(
    db,
    `DELETE FROM events WHERE id IN (
       SELECT e.id FROM events e WHERE e.created_at < now() - interval '${EVENT_RETENTION_DAYS} days'
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
          AND (e.usage_tx IS NULL OR e.usage_tx < (SELECT next_tx FROM usage_watermark)) LIMIT $1) RETURNING id`,
    chunk,
  );
