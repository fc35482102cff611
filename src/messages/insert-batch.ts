// One transaction for a whole batch of accepted sends: quota rows locked, messages inserted
// idempotently, quota charged for what was really created, workers woken. A constant number of
// statements whatever the batch size.
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import {
  type AccountCount,
  chargeAndWake,
  messageInsert,
  type NewMessageRow,
  type QuotaCharge,
} from '../lifecycle/create-messages.js';
import { quotaMonth } from '../plans/plans.js';
import type { AcceptedSend } from './accept-send.js';

/** One accepted send: the intake's row (accept-send.ts) and its recipient. */
export type NewMessage = AcceptedSend & {
  recipient: string;
  /** The user id a send addressed (decision 0036). */
  recipientUserId?: string | null;
  sandbox: boolean;
  requireReplyWindow?: boolean;
  /** The earlier message it replies or reacts to, as JSON (messages/reply-target.ts). */
  replyTargetJson?: string | null;
};

export type Ack = { messageId: string; externalId: string; status: string; queued: boolean };

export type InsertOutcome =
  | { kind: 'created'; ack: Ack }
  | { kind: 'repeat'; ack: Ack }
  | { kind: 'conflict' }
  | { kind: 'quota_exceeded'; limit: number; used: number; resetsAt: string }
  | { kind: 'revoked' }
  /** The uploaded file it uses was deleted (or is not the customer's) by the time of the insert. */
  | { kind: 'media_gone' }
  /** The database refused this request's row (the batch was retried row by row to find it). */
  | { kind: 'error'; error: unknown };

const toRow = (m: NewMessage): NewMessageRow => ({
  ...m,
  broadcastId: null,
  dueAt: m.scheduledAt ?? m.createdAt,
  scheduledAt: m.scheduledAt ?? null,
  requireReplyWindow: m.requireReplyWindow === true,
  replyTargetJson: m.replyTargetJson ?? null,
});

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
  WITH quota AS (
    INSERT INTO quota_usage AS q (customer_id, month)
    SELECT c, $${INSERT.next}::date FROM unnest($${INSERT.next + 1}::uuid[]) AS c ORDER BY c
    ON CONFLICT (customer_id, month) DO UPDATE SET used = q.used
    RETURNING customer_id, used),
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

/** Admits what was created in arrival order until each customer's quota is full; the rest is excess. */
function admit(items: NewMessage[], inserted: Set<string>, used: Map<string, number>, resetsAt: string) {
  const outcomes: (InsertOutcome | null)[] = items.map(() => null);
  const excess: string[] = [];
  const admitted = new Map<string, QuotaCharge>();
  /** Admitted per customer/account: the day's usage rollup (sandbox sends are never charged). */
  const perAccount = new Map<string, AccountCount>();
  items.forEach((m, i) => {
    if (!inserted.has(m.id)) return;
    if (m.quotaLimit !== null) {
      const charge = admitted.get(m.customerId) ?? { customerId: m.customerId, n: 0, limit: m.quotaLimit };
      const soFar = (used.get(m.customerId) ?? 0) + charge.n;
      if (soFar >= m.quotaLimit) {
        excess.push(m.id);
        outcomes[i] = { kind: 'quota_exceeded', limit: m.quotaLimit, used: soFar, resetsAt };
        return;
      }
      charge.n++;
      admitted.set(m.customerId, charge);
      const k = `${m.customerId}/${m.chatAccountId}`;
      const count = perAccount.get(k) ?? { customerId: m.customerId, chatAccountId: m.chatAccountId, n: 0 };
      count.n++;
      perAccount.set(k, count);
    }
    outcomes[i] = {
      kind: 'created',
      ack: { messageId: m.id, externalId: m.externalId, status: 'pending', queued: true },
    };
  });
  return { outcomes, excess, admitted, perAccount };
}

async function insertOnce(tx: Queryable, items: NewMessage[], now: Date): Promise<InsertOutcome[]> {
  const { month, resetsAt } = quotaMonth(now);
  const charged = [...new Set(items.filter((m) => m.quotaLimit !== null).map((m) => m.customerId))].sort();
  const rows = await tx.query<{ kind: 'q' | 'm' | 'f'; id: string; used: number | null }>(LOCK_AND_INSERT_SQL, [
    ...INSERT.params(items.map(toRow)),
    month,
    charged,
  ]);
  const used = new Map(rows.filter((r) => r.kind === 'q').map((r) => [r.id, Number(r.used)]));
  const inserted = new Set(rows.filter((r) => r.kind === 'm').map((r) => r.id));
  const mediaFound = new Set(rows.filter((r) => r.kind === 'f').map((r) => r.id));

  // Admit what was created in arrival order until each customer's quota is full; undo the rest.
  const { outcomes, excess, admitted, perAccount } = admit(items, inserted, used, resetsAt);

  // Requests that inserted nothing: an existing message with that externalId, or a revoked key.
  const others = items.filter((_, i) => outcomes[i] === null);
  if (others.length > 0) {
    const existing = await tx.query<{
      id: string;
      customer_id: string;
      external_id: string;
      payload_hash: string;
      status: string;
    }>(
      `SELECT m.id, m.customer_id, m.external_id, m.payload_hash, m.status FROM messages m
         JOIN unnest($1::uuid[], $2::text[]) AS k(customer_id, external_id)
           ON m.customer_id = k.customer_id AND m.external_id = k.external_id`,
      [others.map((m) => m.customerId), others.map((m) => m.externalId)],
    );
    const byKey = new Map(existing.map((r) => [`${r.customer_id}\u0000${r.external_id}`, r]));
    const excessSet = new Set(excess);
    items.forEach((m, i) => {
      if (outcomes[i] !== null) return;
      const row = byKey.get(`${m.customerId}\u0000${m.externalId}`);
      if (row === undefined)
        outcomes[i] =
          m.mediaId !== null && !mediaFound.has(`${m.mediaId}/${m.customerId}`)
            ? { kind: 'media_gone' }
            : { kind: 'revoked' };
      else if (excessSet.has(row.id)) {
        // Its twin in this batch was refused for quota (and is undone): so is it.
        outcomes[i] = outcomes[items.findIndex((x) => x.id === row.id)] ?? { kind: 'conflict' };
      } else if (row.payload_hash !== m.payloadHash) outcomes[i] = { kind: 'conflict' };
      else
        outcomes[i] = {
          kind: 'repeat',
          ack: { messageId: row.id, externalId: row.external_id, status: row.status, queued: true },
        };
    });
  }

  if (excess.length > 0) await tx.query('DELETE FROM messages WHERE id = ANY($1::uuid[])', [excess]);
  if (admitted.size > 0 || inserted.size > excess.length) {
    // Charges, rollup and alerts of what was admitted (sandbox sends charge nothing), its uploads
    // marked used, the workers woken. Every charge fits: admission counted from the locked rows.
    const created = items.filter((_, i) => outcomes[i]?.kind === 'created');
    await chargeAndWake(tx, {
      charges: [...admitted.values()],
      accounts: [...perAccount.values()],
      usedMedia: [...new Set(created.flatMap((m) => (m.mediaId !== null ? [m.mediaId] : [])))],
      wake: created.length > 0,
      now,
    });
  }
  return outcomes as InsertOutcome[];
}

/** Writes one batch; a deadlock between concurrent batches (crossing unique-key waits) is retried. */
const insertWithRetry = (db: Db, items: NewMessage[], now: Date) =>
  retryTransient(() => db.transaction((tx) => insertOnce(tx, items, now)));

/**
 * Writes a batch of sends. Should the database refuse the batch, each request is tried alone, so
 * one bad row (of any customer) fails only its own request.
 */
export async function insertBatch(db: Db, items: NewMessage[], now = new Date()): Promise<InsertOutcome[]> {
  try {
    return await insertWithRetry(db, items, now);
  } catch (err) {
    if (items.length === 1) return [{ kind: 'error', error: err }];
    const outcomes: InsertOutcome[] = [];
    for (const item of items) {
      try {
        outcomes.push(...(await insertWithRetry(db, [item], now)));
      } catch (itemErr) {
        outcomes.push({ kind: 'error', error: itemErr });
      }
    }
    return outcomes;
  }
}
