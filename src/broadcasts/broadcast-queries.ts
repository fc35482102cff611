// Reading a customer's broadcasts: the record, with status and progress derived from its messages
// (one aggregate over messages_broadcast). Every query starts from the customer id, and from the
// scoped account when the key has one; another customer's broadcast does not exist.
import type { Queryable } from '../db/db.js';
import type { Scope } from '../messages/message-queries.js';
import { errors } from '../shared/errors.js';
import { UUID_PATTERN } from '../shared/schemas.js';
import { MESSAGE_STATUSES, type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';

export type BroadcastRecord = {
  id: string;
  customerId: string;
  externalId: string;
  chatAccountId: string;
  recipients: number;
  createdAt: Date;
  expiresAt: Date;
  cancelledAt: Date | null;
};

const UUID = new RegExp(UUID_PATTERN);

/** By broadcastId or by the caller's externalId (a broadcastId match wins); `lock` for a cancel. */
export async function findBroadcast(q: Queryable, scope: Scope, id: string, lock = false): Promise<BroadcastRecord> {
  const rows = await q.query<Record<string, unknown>>(
    `SELECT id, customer_id, external_id, chat_account_id, recipients, created_at, expires_at, cancelled_at FROM broadcasts
      WHERE customer_id = $1 AND ($2::uuid IS NULL OR chat_account_id = $2)
        AND (external_id = $3 OR ($4::uuid IS NOT NULL AND id = $4::uuid))
      ORDER BY (id = $4::uuid) IS TRUE DESC LIMIT 1${lock ? ' FOR UPDATE' : ''}`,
    [scope.customerId, scope.accountId, id, UUID.test(id) ? id.toLowerCase() : null],
  );
  const r = rows[0];
  if (!r) throw errors.broadcastNotFound();
  return {
    id: r.id as string,
    customerId: r.customer_id as string,
    externalId: r.external_id as string,
    chatAccountId: r.chat_account_id as string,
    recipients: Number(r.recipients),
    createdAt: r.created_at as Date,
    expiresAt: r.expires_at as Date,
    cancelledAt: (r.cancelled_at as Date | null) ?? null,
  };
}

export type BroadcastStatus = 'active' | 'completed' | 'cancelled';

/** The public broadcast: `completed` once no message is pending or queued; `cancelled` once cancelled. */
export async function toBroadcast(q: Queryable, b: BroadcastRecord) {
  const rows = await q.query<{ status: MessageStatus; n: number; cancelled: number }>(
    `SELECT status, count(*)::int AS n, count(*) FILTER (WHERE last_error_code = $3)::int AS cancelled
       FROM messages WHERE customer_id = $1 AND broadcast_id = $2 GROUP BY status`,
    [b.customerId, b.id, SEND_ERROR_CODES.BROADCAST_CANCELLED],
  );
  const counts = Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<MessageStatus, number>;
  let cancelledMessages = 0;
  for (const r of rows) {
    counts[r.status] = Number(r.n);
    cancelledMessages += Number(r.cancelled);
  }
  const status: BroadcastStatus =
    b.cancelledAt !== null ? 'cancelled' : counts.pending + counts.queued === 0 ? 'completed' : 'active';
  return {
    broadcastId: b.id,
    externalId: b.externalId,
    chatAccountId: b.chatAccountId,
    status,
    recipients: b.recipients,
    counts,
    cancelledMessages,
    createdAt: b.createdAt.toISOString(),
    cancelledAt: b.cancelledAt?.toISOString() ?? null,
    expiresAt: b.expiresAt.toISOString(),
  };
}

export type Broadcast = Awaited<ReturnType<typeof toBroadcast>>;
