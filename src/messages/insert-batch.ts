// One transaction for a whole batch of accepted sends: quota rows locked, messages inserted
// idempotently (lifecycle/insert-sends.ts), quota charged for what was really created and admitted
// (lifecycle/charge-quota.ts, the algorithm broadcasts use too), workers woken. A constant number
// of statements whatever the batch size.
import type { Db, Queryable } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { admitByQuota, dropUnadmitted } from '../lifecycle/charge-quota.js';
import { chargeAndWake, type NewMessageRow } from '../lifecycle/create-messages.js';
import { insertSends } from '../lifecycle/insert-sends.js';
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
 * Admits what was created, in arrival order, while each customer's quota lasts (one ask of one
 * message per send: lifecycle/charge-quota.ts); the rest is excess.
 */
function admit(items: NewMessage[], inserted: Set<string>, used: Map<string, number>, resetsAt: string) {
  const created = items.filter((m) => inserted.has(m.id));
  const { verdicts, charges, accounts } = admitByQuota(
    created.map((m) => ({ customerId: m.customerId, chatAccountId: m.chatAccountId, n: 1, limit: m.quotaLimit })),
    used,
  );
  const verdictOf = new Map(created.map((m, i) => [m.id, verdicts[i]!]));
  const excess: string[] = [];
  const outcomes = items.map((m): InsertOutcome | null => {
    const verdict = verdictOf.get(m.id);
    if (verdict === undefined) return null;
    if (!verdict.admitted) {
      excess.push(m.id);
      return { kind: 'quota_exceeded', limit: verdict.limit, used: verdict.used, resetsAt };
    }
    return { kind: 'created', ack: { messageId: m.id, externalId: m.externalId, status: 'pending', queued: true } };
  });
  return { outcomes, excess, charges, accounts };
}

async function insertOnce(tx: Queryable, items: NewMessage[], now: Date): Promise<InsertOutcome[]> {
  const { month, resetsAt } = quotaMonth(now);
  const charged = [...new Set(items.filter((m) => m.quotaLimit !== null).map((m) => m.customerId))].sort();
  const { used, inserted, mediaFound } = await insertSends(tx, items.map(toRow), month, charged);

  // Admit what was created in arrival order until each customer's quota is full; undo the rest.
  const { outcomes, excess, charges, accounts } = admit(items, inserted, used, resetsAt);

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

  await dropUnadmitted(tx, excess);
  if (charges.length > 0 || inserted.size > excess.length) {
    // Charges, rollup and alerts of what was admitted (sandbox sends charge nothing), its uploads
    // marked used, the workers woken. Every charge fits: admission counted from the locked rows.
    const created = items.filter((_, i) => outcomes[i]?.kind === 'created');
    await chargeAndWake(tx, {
      charges,
      accounts,
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
