// Reading a customer's broadcasts: the record, with status and progress derived from its messages
// (one aggregate over messages_broadcast, for one broadcast or a whole page). Every query starts
// from the customer id, and from the scoped account when the key has one; another customer's
// broadcast does not exist.
// This module is also the one writer of broadcasts (ARCHITECTURE.md, "Who writes what"): the
// record's insert, its cancellation and the purger's deletion.
import { deleteInChunks } from '../db/chunked.js';
import type { Queryable } from '../db/db.js';
import { errors } from '../shared/errors.js';
import { keysetPage } from '../shared/keyset.js';
import { UUID_PATTERN } from '../shared/schemas.js';
import { type Scope, scopeWhere } from '../shared/scope.js';
import { type BroadcastStatus, MESSAGE_STATUSES, type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';

export type BroadcastRecord = {
  id: string;
  customerId: string;
  externalId: string;
  name: string | null;
  chatAccountId: string;
  recipients: number;
  createdAt: Date;
  expiresAt: Date;
  cancelledAt: Date | null;
  /** `sendAt` of the request (null: at once, or created before it was kept). */
  sendAt: Date | null;
};

const UUID = new RegExp(UUID_PATTERN);

const RECORD_COLUMNS =
  'id, customer_id, external_id, name, chat_account_id, recipients, created_at, expires_at, cancelled_at, send_at';

/** A row of RECORD_COLUMNS as the database returns it. */
type RecordRow = {
  id: string;
  customer_id: string;
  external_id: string;
  name: string | null;
  chat_account_id: string;
  recipients: number;
  created_at: Date;
  expires_at: Date;
  cancelled_at: Date | null;
  send_at: Date | null;
};

function toRecord(r: RecordRow): BroadcastRecord {
  return {
    id: r.id,
    customerId: r.customer_id,
    externalId: r.external_id,
    name: r.name,
    chatAccountId: r.chat_account_id,
    recipients: r.recipients,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    cancelledAt: r.cancelled_at,
    sendAt: r.send_at,
  };
}

/** Whether the customer has a broadcast with this externalId (an accepted broadcast's repeat). */
export async function broadcastExists(q: Queryable, customerId: string, externalId: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM broadcasts WHERE customer_id = $1 AND external_id = $2', [
    customerId,
    externalId,
  ]);
  return rows.length > 0;
}

/** By broadcastId or by the caller's externalId (a broadcastId match wins); `lock` for a cancel. */
/**
 * By broadcastId or by the caller's externalId (a broadcastId match wins); `lock` for a cancel.
 * Broadcasts are live data only (sandbox keys cannot create one): a sandbox scope finds none.
 */
export async function findBroadcast(q: Queryable, scope: Scope, id: string, lock = false): Promise<BroadcastRecord> {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'broadcasts', params);
  params.push(id, UUID.test(id) ? id.toLowerCase() : null);
  const ext = `$${params.length - 1}`;
  const uid = `$${params.length}::uuid`;
  const rows = await q.query<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM broadcasts
      WHERE ${where.join(' AND ')} AND (external_id = ${ext} OR (${uid} IS NOT NULL AND id = ${uid}))
      ORDER BY (id = ${uid}) IS TRUE DESC LIMIT 1${lock ? ' FOR UPDATE' : ''}`,
    params,
  );
  const r = rows[0];
  if (!r) throw errors.broadcastNotFound();
  return toRecord(r);
}

/** Whether a broadcast has messages still to send: what tells `active` from `completed`. */
const HAS_UNSENT = `EXISTS (SELECT 1 FROM messages m WHERE m.customer_id = b.customer_id AND m.broadcast_id = b.id
                              AND m.status IN ('pending', 'queued'))`;
/** The SQL twin of the status derivation in toBroadcasts, for the status filter of a list. */
const STATUS_CONDITION: Record<BroadcastStatus, string> = {
  cancelled: 'b.cancelled_at IS NOT NULL',
  active: `b.cancelled_at IS NULL AND ${HAS_UNSENT}`,
  completed: `b.cancelled_at IS NULL AND NOT ${HAS_UNSENT}`,
};

export type BroadcastListFilter = { status?: BroadcastStatus; limit: number; cursor?: string };

/** Newest first; the cursor is the (createdAt, id) of the last record of the previous page. None for a sandbox scope. */
export async function listBroadcasts(
  q: Queryable,
  scope: Scope,
  f: BroadcastListFilter,
): Promise<{ records: BroadcastRecord[]; nextCursor: string | null }> {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'broadcasts', params, 'b');
  if (f.status !== undefined) where.push(STATUS_CONDITION[f.status]);
  const page = await keysetPage<RecordRow>(
    q,
    { select: `SELECT ${RECORD_COLUMNS} FROM broadcasts b`, where, params, key: { at: 'b.created_at', id: 'b.id' } },
    f,
  );
  return { records: page.rows.map(toRecord), nextCursor: page.nextCursor };
}

type Counts = Record<MessageStatus, number>;

function toView(b: BroadcastRecord, counts: Counts, cancelledMessages: number) {
  const status: BroadcastStatus =
    b.cancelledAt !== null ? 'cancelled' : counts.pending + counts.queued === 0 ? 'completed' : 'active';
  return {
    broadcastId: b.id,
    externalId: b.externalId,
    name: b.name,
    chatAccountId: b.chatAccountId,
    status,
    recipients: b.recipients,
    counts,
    cancelledMessages,
    createdAt: b.createdAt.toISOString(),
    cancelledAt: b.cancelledAt?.toISOString() ?? null,
    expiresAt: b.expiresAt.toISOString(),
    sendAt: b.sendAt?.toISOString() ?? null,
  };
}

export type Broadcast = ReturnType<typeof toView>;

/**
 * The public broadcasts of one customer's records, in their order, with counts from one aggregate:
 * `completed` once no message is pending or queued; `cancelled` once cancelled.
 */
export async function toBroadcasts(q: Queryable, customerId: string, records: BroadcastRecord[]): Promise<Broadcast[]> {
  if (records.length === 0) return [];
  const rows = await q.query<{ broadcast_id: string; status: MessageStatus; n: number; cancelled: number }>(
    `SELECT broadcast_id, status, count(*)::int AS n, count(*) FILTER (WHERE last_error_code = $3)::int AS cancelled
       FROM messages WHERE customer_id = $1 AND broadcast_id = ANY($2::uuid[]) GROUP BY broadcast_id, status`,
    [customerId, records.map((b) => b.id), SEND_ERROR_CODES.BROADCAST_CANCELLED],
  );
  const progress = new Map(
    records.map((b) => [
      b.id,
      { counts: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Counts, cancelled: 0 },
    ]),
  );
  for (const r of rows) {
    const p = progress.get(r.broadcast_id);
    if (!p) continue;
    p.counts[r.status] = r.n;
    p.cancelled += r.cancelled;
  }
  return records.map((b) => toView(b, progress.get(b.id)!.counts, progress.get(b.id)!.cancelled));
}

/** The public broadcast of one record. */
export async function toBroadcast(q: Queryable, b: BroadcastRecord): Promise<Broadcast> {
  return (await toBroadcasts(q, b.customerId, [b]))[0]!;
}

/**
 * The record, idempotent on (customer, externalId), and only while the key ($4) is not revoked:
 * (id, customer, account, key, externalId, payload hash, recipients, created, expires, name,
 * content JSON, sendAt). Its id, or no row when not written.
 */
export function insertBroadcastRecord(tx: Queryable, params: unknown[]): Promise<{ id: string }[]> {
  return tx.query<{ id: string }>(
    `INSERT INTO broadcasts (id, customer_id, chat_account_id, api_key_id, external_id, payload_hash, recipients, created_at, expires_at, name, content, send_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text::jsonb, $12::timestamptz
      WHERE $4::uuid IS NULL -- a portal user (their session was checked at the edge)
         OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $4 AND k.revoked_at IS NULL)
     ON CONFLICT (customer_id, external_id) DO NOTHING
     RETURNING id`,
    params,
  );
}

/** Marks the broadcast cancelled, unless nothing of it is left to send (it is complete then). */
export async function markBroadcastCancelled(tx: Queryable, id: string, customerId: string): Promise<void> {
  await tx.query(
    `UPDATE broadcasts SET cancelled_at = COALESCE(cancelled_at, now())
          WHERE id = $1 AND EXISTS (SELECT 1 FROM messages WHERE customer_id = $2 AND broadcast_id = $1 AND status IN ('pending', 'queued'))`,
    [id, customerId],
  );
}

/** The purger: a record goes once its lifetime has passed and its messages are gone; how many went. */
export function purgeBroadcasts(db: Pick<Queryable, 'query'>, chunk: number): Promise<number> {
  return deleteInChunks(
    db,
    `DELETE FROM broadcasts WHERE id IN (SELECT b.id FROM broadcasts b WHERE b.expires_at <= now()
       AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.broadcast_id = b.id) LIMIT $1) RETURNING id`,
    chunk,
  );
}
