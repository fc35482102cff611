// The statement of a group-committed batch of sends (messages/insert-batch.ts): this month's quota
// rows of the charged customers locked and read (charge-quota.ts), the uploads the messages use
// locked, and the messages inserted idempotently, in one statement whatever the batch size.
import type { Queryable } from '../db/db.js';
import { lockQuotaSql } from './charge-quota.js';
import { messageInsert, type NewMessageRow } from './create-messages.js';

/**
 * The lifecycle's message insert, for rows whose key is not revoked and whose upload is still
 * there. A portal user's send (the conversation's reply box) has no key (api_key_id null).
 */
const INSERT = messageInsert(
  1,
  `(t.api_key_id IS NULL OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = t.api_key_id AND k.revoked_at IS NULL))
       AND (t.media_id IS NULL OR EXISTS (SELECT 1 FROM media f WHERE f.id = t.media_id AND f.customer_id = t.customer_id))`,
);

/**
 * One statement: lock (creating if missing) this month's quota rows of the charged customers, in
 * customer id order so batches never deadlock, and read their usage; insert the messages
 * idempotently, re-checking each key's revocation. The usage read is the latest committed one and
 * stays ours until commit, so admitting by it cannot overshoot.
 */
const LOCK_AND_INSERT_SQL = `
  WITH quota AS (${lockQuotaSql(`$${INSERT.next}`, `$${INSERT.next + 1}`)}),
  -- The uploads the messages use, locked so they cannot be deleted before this commits (a deleted
  -- one leaves its message out).
  media AS (
    SELECT id, customer_id FROM media_files
     WHERE id = ANY(${INSERT.param('media_id')}::uuid[]) AND (used_at IS NOT NULL OR expires_at > now()) ORDER BY id FOR UPDATE),
  inserted AS (${INSERT.sql})
  SELECT 'q' AS kind, customer_id::text AS id, used FROM quota
  UNION ALL
  SELECT 'm', id::text, NULL FROM inserted
  UNION ALL
  SELECT 'f', id::text || '/' || customer_id::text, NULL FROM media`;

/**
 * Locks the quota rows of `month` of the `charged` customers, locks the uploads and inserts the
 * rows. Returns the customers' usage before this batch, the ids really inserted (a taken
 * externalId, a revoked key or a deleted upload leaves a row out) and the uploads found, as
 * `<media id>/<customer id>`.
 */
export async function insertSends(tx: Queryable, rows: NewMessageRow[], month: string, charged: string[]) {
  const out = await tx.query<{ kind: 'q' | 'm' | 'f'; id: string; used: number | null }>(LOCK_AND_INSERT_SQL, [
    ...INSERT.params(rows),
    month,
    charged,
  ]);
  return {
    used: new Map(out.filter((r) => r.kind === 'q').map((r) => [r.id, Number(r.used)])),
    inserted: new Set(out.filter((r) => r.kind === 'm').map((r) => r.id)),
    mediaFound: new Set(out.filter((r) => r.kind === 'f').map((r) => r.id)),
  };
}
