// One transaction for a whole broadcast, a constant number of statements whatever its size: the
// record (idempotent on the broadcast's externalId), then the lifecycle's intake
// (lifecycle/create-messages.ts): the quota row locked and every recipient admitted at once, or
// none (lifecycle/charge-quota.ts), one message row per recipient, the workers woken at commit.
// Any refusal rolls back everything.
import crypto from 'node:crypto';

import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { admitByQuota, lockQuota } from '../lifecycle/charge-quota.js';
import { chargeAndWake, messageInsert, type NewMessageRow } from '../lifecycle/create-messages.js';
import { lockMediaForBroadcast } from '../lifecycle/media-lifecycle.js';
import type { AcceptedSend } from '../messages/accept-send.js';
import { quotaMonth } from '../plans/plans.js';
import { errors } from '../shared/errors.js';
import { insertBroadcastRecord } from './broadcast-store.js';

/** The message rows of a broadcast, as parallel columns (what unnest takes). */
export type BroadcastRows = {
  externalIds: string[];
  recipients: string[];
  /** A recipient's own content JSON, or null for the broadcast's shared content. */
  contents: (string | null)[];
  /** Seconds after creation (or after `sendAt`) when each message becomes due (see buildMessageRows). */
  delaysSeconds: number[];
};

/**
 * One accepted broadcast: the intake's row (accept-send.ts; its content is the shared content),
 * its name and its message rows. Never sandbox, so always a quota limit.
 */
export type NewBroadcast = AcceptedSend & { quotaLimit: number; name: string | null; rows: BroadcastRows };

/** `created`, or the id of the broadcast this request repeats. Refusals are thrown. */
export type BroadcastInsert = { created: true; id: string } | { created: false; id: string };

async function insertOnce(tx: Queryable, b: NewBroadcast): Promise<BroadcastInsert> {
  const n = b.rows.recipients.length;
  const record = await insertBroadcastRecord(tx, [
    b.id,
    b.customerId,
    b.chatAccountId,
    b.apiKeyId,
    b.externalId,
    b.payloadHash,
    n,
    b.createdAt.toISOString(),
    b.expiresAt.toISOString(),
    b.name,
    b.contentJson,
    b.scheduledAt?.toISOString() ?? null,
  ]);
  if (record.length === 0) {
    const [existing] = await tx.query<{ id: string; payload_hash: string }>(
      'SELECT id, payload_hash FROM broadcasts WHERE customer_id = $1 AND external_id = $2',
      [b.customerId, b.externalId],
    );
    if (!existing) throw errors.invalidKey(); // the key was revoked: nothing was written
    if (existing.payload_hash !== b.payloadHash) throw errors.conflict();
    return { created: false, id: existing.id };
  }

  // Every recipient is charged now, or none: one ask of n against the locked quota row
  // (lifecycle/charge-quota.ts, the algorithm sends use too).
  const { month, resetsAt } = quotaMonth(b.createdAt);
  const used = await lockQuota(tx, [b.customerId], month);
  const ask = { customerId: b.customerId, chatAccountId: b.chatAccountId, n, limit: b.quotaLimit };
  const { verdicts, charges, accounts } = admitByQuota([ask], used);
  const [verdict] = verdicts;
  if (!verdict?.admitted) throw errors.quotaExceeded(b.quotaLimit, verdict?.used ?? 0, resetsAt);
  await chargeAndWake(tx, { charges, accounts, usedMedia: [], wake: true, now: b.createdAt });

  // The upload is locked, so it cannot be deleted before this commits, and marked used.
  if (b.mediaId !== null) {
    if (!(await lockMediaForBroadcast(tx, b.mediaId, b.customerId))) throw errors.invalidMedia('media_not_found');
  }

  const inserted = await tx.query(INSERT.sql, INSERT.params(messageRows(b)));
  if (inserted.length !== n) {
    const taken = await tx.query<{ external_id: string }>(
      `SELECT external_id FROM messages WHERE customer_id = $1 AND external_id = ANY($2::text[]) AND broadcast_id IS DISTINCT FROM $3 LIMIT 1`,
      [b.customerId, b.rows.externalIds, b.id],
    );
    const index = taken[0] ? b.rows.externalIds.indexOf(taken[0].external_id) : -1;
    throw errors.conflict(`the message externalId of recipients.${index} is already used by another message`);
  }
  return { created: true, id: b.id };
}

const INSERT = messageInsert(1);

/** One message row per recipient: the shared content unless it has its own, due at its paced offset. */
function messageRows(b: NewBroadcast): NewMessageRow[] {
  const start = (b.scheduledAt ?? b.createdAt).getTime();
  return b.rows.recipients.map((recipient, i) => ({
    id: crypto.randomUUID(),
    customerId: b.customerId,
    chatAccountId: b.chatAccountId,
    apiKeyId: b.apiKeyId,
    externalId: b.rows.externalIds[i]!,
    payloadHash: b.payloadHash,
    recipient,
    channel: b.channel,
    contentJson: b.rows.contents[i] ?? b.contentJson,
    metadataJson: b.metadataJson,
    sandbox: false,
    broadcastId: b.id,
    maxAttempts: b.maxAttempts,
    createdAt: b.createdAt,
    expiresAt: b.expiresAt,
    dueAt: new Date(start + b.rows.delaysSeconds[i]! * 1000),
    mediaId: b.mediaId,
    scheduledAt: b.scheduledAt ?? null,
    requireReplyWindow: false,
    replyTargetJson: null,
  }));
}

/** Writes a broadcast; a deadlock with a concurrent send batch is retried (it rolled back). */
export const insertBroadcast = (db: Db, b: NewBroadcast): Promise<BroadcastInsert> =>
  retryTransient(() => db.transaction((tx) => insertOnce(tx, b)));
