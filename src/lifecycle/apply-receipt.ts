// Applying provider receipts to their messages, a batch in one transaction with a constant number
// of statements: status only moves forward (sent → delivered → read; failed only before
// delivery), each real step writes one message.status event with the provider's time, and a
// receipt that beats the send's own commit is parked, never lost, and applied by that commit.
//
// Per batch: (1) lock the receipts' messages, in id order; (2) only when some receipt matched no
// message: lock their wamids, (3) look again, (4) park those still unknown; (5) one UPDATE of
// every changed message (its status and the price a receipt carried; a row that would come out
// the same is not rewritten); (6) one statement for all
// events and their deliveries (the usage steps among them: usage-rollup.ts); (7) when the batch
// prices a message for the first time, one upsert of the pricing rollup; (4) to (7) go out together, pipelined (plus the media release when a receipt takes a message out of the
// queue, rare: then in turn).
//
// The race with the send's own commit is closed by a transaction-scoped advisory lock per wamid:
// the dispatcher takes it after writing the wamid and before applying parked receipts
// (applyParkedReceipts), a receipt batch takes it before looking again for a wamid it did not
// find. Whichever comes second sees the other's commit, so nothing waits for the parked sweep.
import type { Queryable } from '../db/db.js';
import { classifyProviderError } from '../provider/error-map.js';
import type { ReceiptPricing, ReceiptStatus, StatusReceipt } from '../provider/parse-webhook.js';
import { releaseMedia } from './media-lifecycle.js';
import { type EventMessage, messageStatusEvent } from './message-status-event.js';
import type { SendErrorDetail } from './transitions.js';
import { countPricing, type PricedMessage } from './usage-rollup.js';
import { type OutboxEvent, writeEvents } from './write-events.js';

const RANK: Record<string, number> = { pending: -1, queued: -1, sent: 1, delivered: 2, read: 3, failed: 9 };
const FORWARD = ['sent', 'delivered', 'read'] as const;
const QUEUED = ['pending', 'queued'];

/** The advisory-lock class of wamids (two-key form: no clash with single-key advisory locks). */
const WAMID_LOCK_CLASS = 7411;

/**
 * The forward-only rule: the statuses a receipt moves a message through from `current`, in order
 * (a `read` receipt for a queued message steps through sent and delivered); none when it is stale
 * or a duplicate. `failed` applies only before delivery.
 */
export function receiptSteps(current: string, receipt: ReceiptStatus): ReceiptStatus[] {
  const rank = RANK[current] ?? 9;
  if (receipt === 'failed') return rank <= 1 ? ['failed'] : [];
  return FORWARD.filter((s) => RANK[s]! > rank && RANK[s]! <= RANK[receipt]!);
}

/** One receipt of a verified webhook, routed to its account. */
export type ReceiptItem = { accountId: string; receipt: StatusReceipt };

/** 'applied', 'ignored' (stale or duplicate) or 'parked' (no such message yet). */
export type ReceiptOutcome = 'applied' | 'ignored' | 'parked';

type Row = EventMessage & {
  status: string;
  media_id: string | null;
  provider_message_id: string | null;
  /** Whether a receipt priced the message before (it is counted in the rollup once). */
  priced: boolean;
};

/** What a batch does to one message: its receipts folded in arrival order. */
type Change = {
  row: Row;
  status: string;
  sentAt: Date | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  failedAt: Date | null;
  error: SendErrorDetail | null;
  wamid: string | null;
  /** The last pricing a receipt of the batch carried, and when (stored as received). */
  pricing: ReceiptPricing | null;
  pricedAt: Date | null;
};

const key = (accountId: string, wamid: string) => `${accountId}\u0000${wamid}`;

/** Applies a batch of receipts in the caller's transaction; one outcome per item, in order. */
export async function applyReceipts(tx: Queryable, items: ReceiptItem[]): Promise<ReceiptOutcome[]> {
  if (items.length === 0) return [];
  const rows = await lockMessages(tx, items, true);
  let match = matcher(rows);
  const unknown = items.filter((i) => !match(i));
  if (unknown.length > 0) {
    // Perhaps a send whose wamid is being committed right now: wait for it, then look again.
    await lockWamids(
      tx,
      unknown.map((i) => i.receipt.providerMessageId),
    );
    const seen = new Set(rows.map((r) => r.id));
    rows.push(...(await lockMessages(tx, unknown, false)).filter((r) => !seen.has(r.id)));
    match = matcher(rows);
  }

  const changes = new Map<string, Change>();
  const events: OutboxEvent[] = [];
  const outcomes: ReceiptOutcome[] = [];
  const parked: ReceiptItem[] = [];
  for (const item of items) {
    const row = match(item);
    if (!row) {
      parked.push(item);
      outcomes.push('parked');
      continue;
    }
    const r = item.receipt;
    const c = changes.get(row.id) ?? newChange(row);
    // The price is stored whatever the status does: it may come on a receipt that moves nothing
    // (the `sent` receipt after the send's own answer moved the message to sent).
    if (r.pricing) {
      c.pricing = r.pricing;
      c.pricedAt ??= r.occurredAt;
      changes.set(row.id, c);
    }
    const steps = receiptSteps(c.status, r.status);
    if (steps.length === 0) {
      outcomes.push('ignored');
      continue;
    }
    const error = r.status === 'failed' ? receiptError(r) : null;
    const from = [c.status, ...steps];
    steps.forEach((to, i) => {
      if (to === 'sent') c.sentAt ??= r.occurredAt;
      if (to === 'delivered') c.deliveredAt ??= r.occurredAt;
      if (to === 'read') c.readAt ??= r.occurredAt;
      if (to === 'failed') c.failedAt = r.occurredAt;
      events.push(messageStatusEvent({ message: row, from: from[i]!, to, at: r.occurredAt, error }));
    });
    c.status = steps[steps.length - 1]!;
    c.error = error ?? c.error;
    c.wamid ??= r.providerMessageId;
    changes.set(row.id, c);
    outcomes.push('applied');
  }

  await writeBatch(tx, [...changes.values()], events, parked);
  return outcomes;
}

/** The batch's writes: the messages, their events, the rollups, the parked receipts (pipelined). */
async function writeBatch(
  tx: Queryable,
  changes: Change[],
  events: OutboxEvent[],
  parked: ReceiptItem[],
): Promise<void> {
  // A receipt can take a message out of the queue (an answer lost after the provider accepted it):
  // its upload is released once the message has moved (rare; then the statements go in turn).
  const released = changes.filter((c) => c.row.media_id !== null && QUEUED.includes(c.row.status));
  const advance = changes.length > 0 ? advanceMessages(tx, changes) : null;
  if (released.length > 0) {
    await advance;
    await releaseMedia(tx, [...new Set(released.map((c) => c.row.media_id!))]);
  }
  // Otherwise the update, the events and the parking are independent: issued together, they are
  // pipelined on PostgreSQL (one round trip instead of three).
  await Promise.all([
    advance,
    writeEvents(tx, events),
    countPricing(tx, firstPrices(changes)),
    parked.length > 0 ? parkReceipts(tx, parked) : null,
  ]);
}

/** A message no receipt of the batch changed yet. */
const newChange = (row: Row): Change => ({
  row,
  status: row.status,
  sentAt: null,
  deliveredAt: null,
  readAt: null,
  failedAt: null,
  error: null,
  wamid: null,
  pricing: null,
  pricedAt: null,
});

/** The messages a batch prices for the first time (each counts once in the rollup). */
function firstPrices(changes: Change[]): PricedMessage[] {
  return changes.flatMap((c) =>
    c.pricing && c.pricedAt && !c.row.priced
      ? [
          {
            customerId: c.row.customerId,
            accountId: c.row.chatAccountId,
            sandbox: c.row.sandbox,
            at: c.pricedAt,
            pricing: c.pricing,
          },
        ]
      : [],
  );
}

/** The message of a receipt: our own id echoed back wins over the provider's id. */
function matcher(rows: Row[]) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const byWamid = new Map(
    rows.flatMap((r) => (r.provider_message_id !== null ? [[key(r.chatAccountId, r.provider_message_id), r]] : [])),
  );
  return ({ accountId, receipt: r }: ReceiptItem): Row | undefined => {
    const own = r.messageId !== null ? byId.get(r.messageId) : undefined;
    if (own && own.chatAccountId === accountId) return own;
    return byWamid.get(key(accountId, r.providerMessageId));
  };
}

/** A failed receipt's error, mapped through the provider's error table. */
function receiptError(r: StatusReceipt): SendErrorDetail {
  const verdict = classifyProviderError(r.error?.code ?? null, null, null);
  return {
    code: verdict.errorCode,
    message:
      (verdict.action === 'fail' ? verdict.message : undefined) ??
      r.error?.details ??
      r.error?.title ??
      'The provider reported the message as failed',
    provider: {
      code: r.error?.code ?? null,
      subcode: null,
      message: r.error?.title ?? null,
      fbtraceId: null,
      source: 'status_webhook',
    },
  };
}

/**
 * The receipts' messages (by provider id, or by our own id echoed back when `byOwnId`), locked
 * in id order so that concurrent batches never deadlock on them.
 */
async function lockMessages(tx: Queryable, items: ReceiptItem[], byOwnId: boolean): Promise<Row[]> {
  const own = byOwnId ? items.filter((i) => i.receipt.messageId !== null) : [];
  return tx.query<Row>(
    `SELECT m.id, m.customer_id AS "customerId", m.status, m.external_id AS "externalId", m.channel, m.recipient,
            m.chat_account_id AS "chatAccountId", m.media_id, m.provider_message_id, m.sandbox,
            m.recipient_user_id AS "recipientUserId",
            m.pricing IS NOT NULL AS priced
       FROM messages m
      WHERE m.id IN (SELECT m2.id FROM messages m2
                       JOIN unnest($1::uuid[], $2::text[]) AS t(a, w) ON m2.chat_account_id = t.a AND m2.provider_message_id = t.w
                     UNION
                     SELECT m3.id FROM messages m3
                       JOIN unnest($3::uuid[], $4::uuid[]) AS o(a, id) ON m3.id = o.id AND m3.chat_account_id = o.a)
      ORDER BY m.id FOR UPDATE OF m`,
    [
      items.map((i) => i.accountId),
      items.map((i) => i.receipt.providerMessageId),
      own.map((i) => i.accountId),
      own.map((i) => i.receipt.messageId),
    ],
  );
}

/**
 * Transaction-scoped advisory locks on these wamids, in one global order (no deadlock between
 * two lockers). See the head of this file for the protocol.
 */
async function lockWamids(tx: Queryable, wamids: string[]): Promise<void> {
  await tx.query(
    `SELECT count(*) FROM (
       SELECT pg_advisory_xact_lock($1::int, k) FROM (SELECT DISTINCT hashtext(w) AS k FROM unnest($2::text[]) AS w ORDER BY k) AS s
     ) AS locked`,
    [WAMID_LOCK_CLASS, wamids],
  );
}

/**
 * Every changed message moves to its last status, each step stamped once; its retries and lease
 * end. A message whose row would come out the same (a repeated receipt carrying the price already
 * stored, or a `failed` one after delivery carrying it) is not rewritten: the new values are
 * computed first and compared, column by column, with the row (decision 0054).
 */
async function advanceMessages(tx: Queryable, changes: Change[]): Promise<void> {
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  await tx.query(
    `WITH n AS (
       SELECT m.id, t.status,
              COALESCE(m.sent_at, t.sent_at) AS sent_at,
              COALESCE(m.delivered_at, t.delivered_at) AS delivered_at,
              COALESCE(m.read_at, t.read_at) AS read_at,
              COALESCE(t.failed_at, m.failed_at) AS failed_at,
              -- A receipt that beats the send's own outcome ends the retries too: the error of an earlier
              -- attempt goes, as when the send's answer moves the message to sent (lastErrorCode stays).
              -- Its attempt was counted when the send started (startAttempts): not counted again.
              CASE WHEN t.error IS NULL AND m.status IN ('pending', 'queued') THEN NULL ELSE COALESCE(t.error::jsonb, m.error) END AS error,
              COALESCE(t.error::jsonb ->> 'code', m.last_error_code) AS last_error_code,
              COALESCE(m.provider_message_id, t.wamid) AS provider_message_id,
              COALESCE(t.pricing::jsonb, m.pricing) AS pricing,
              CASE WHEN m.status IN ('pending', 'queued') THEN COALESCE(m.last_attempt_at, now()) ELSE m.last_attempt_at END AS last_attempt_at
         FROM messages m
         JOIN unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[],
                     $7::timestamptz[], $8::text[], $9::text[], $10::text[])
              AS t(id, from_status, status, sent_at, delivered_at, read_at, failed_at, error, wamid, pricing)
           ON m.id = t.id AND m.status = t.from_status
     )
     UPDATE messages m SET status = n.status, sent_at = n.sent_at, delivered_at = n.delivered_at, read_at = n.read_at,
        failed_at = n.failed_at, error = n.error, last_error_code = n.last_error_code,
        provider_message_id = n.provider_message_id, pricing = n.pricing, last_attempt_at = n.last_attempt_at,
        due_at = NULL, locked_by = NULL, locked_until = NULL
       FROM n
      WHERE m.id = n.id
        AND (m.status, m.sent_at, m.delivered_at, m.read_at, m.failed_at, m.error, m.last_error_code,
             m.provider_message_id, m.pricing, m.last_attempt_at, m.due_at, m.locked_by, m.locked_until)
            IS DISTINCT FROM
            (n.status, n.sent_at, n.delivered_at, n.read_at, n.failed_at, n.error, n.last_error_code,
             n.provider_message_id, n.pricing, n.last_attempt_at, NULL::timestamptz, NULL::text, NULL::timestamptz)`,
    [
      changes.map((c) => c.row.id),
      changes.map((c) => c.row.status),
      changes.map((c) => c.status),
      changes.map((c) => iso(c.sentAt)),
      changes.map((c) => iso(c.deliveredAt)),
      changes.map((c) => iso(c.readAt)),
      changes.map((c) => iso(c.failedAt)),
      changes.map((c) => (c.error ? JSON.stringify(c.error) : null)),
      changes.map((c) => c.wamid),
      changes.map((c) => (c.pricing ? JSON.stringify(c.pricing) : null)),
    ],
  );
}

async function parkReceipts(tx: Queryable, items: ReceiptItem[]): Promise<void> {
  await tx.query(
    `INSERT INTO pending_receipts (chat_account_id, provider_message_id, status, occurred_at, error, pricing)
     SELECT a, w, s, o, e::jsonb, p::jsonb FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[])
       WITH ORDINALITY AS t(a, w, s, o, e, p, n) ORDER BY n`,
    [
      items.map((i) => i.accountId),
      items.map((i) => i.receipt.providerMessageId),
      items.map((i) => i.receipt.status),
      items.map((i) => i.receipt.occurredAt.toISOString()),
      items.map((i) => (i.receipt.error ? JSON.stringify(i.receipt.error) : null)),
      items.map((i) => (i.receipt.pricing ? JSON.stringify(i.receipt.pricing) : null)),
    ],
  );
}

/**
 * Applies parked receipts whose message is now known. With `providerMessageIds` (the send's own
 * commit, in its transaction) it first takes those wamids' locks, so a receipt batch parking one
 * of them right now either commits first (and is seen here) or sees this commit; with null it is
 * the periodic sweep, a safety net.
 */
export async function applyParkedReceipts(
  tx: Queryable,
  providerMessageIds: string[] | null,
  limit = 500,
): Promise<number> {
  if (providerMessageIds !== null) {
    if (providerMessageIds.length === 0) return 0;
    await lockWamids(tx, providerMessageIds);
  }
  const parked = await tx.query<{
    id: string;
    chat_account_id: string;
    provider_message_id: string;
    status: string;
    occurred_at: Date;
    error: StatusReceipt['error'];
    pricing: ReceiptPricing | null;
  }>(
    `DELETE FROM pending_receipts p WHERE p.id IN (
        SELECT p2.id FROM pending_receipts p2 JOIN messages m ON m.provider_message_id = p2.provider_message_id AND m.chat_account_id = p2.chat_account_id
         WHERE $1::text[] IS NULL OR p2.provider_message_id = ANY($1::text[]) ORDER BY p2.id LIMIT $2)
      RETURNING p.id, p.chat_account_id, p.provider_message_id, p.status, p.occurred_at, p.error, p.pricing`,
    [providerMessageIds, limit],
  );
  if (parked.length === 0) return 0;
  parked.sort((a, b) => Number(a.id) - Number(b.id));
  await applyReceipts(
    tx,
    parked.map((p) => ({
      accountId: p.chat_account_id,
      receipt: {
        phoneNumberId: '',
        providerMessageId: p.provider_message_id,
        status: p.status as StatusReceipt['status'],
        occurredAt: new Date(p.occurred_at),
        messageId: null,
        error: p.error,
        pricing: p.pricing,
      },
    })),
  );
  return parked.length;
}
