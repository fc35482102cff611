// Ingesting inbound messages, a batch in one transaction with a constant number of statements, in
// numbered steps: (1) dedupe provider retries, (2) resolve hidden numbers, (3) update the sender
// aggregate (before any inbox filter) and apply opt-out keywords, (4) store what the inbox keeps
// (Pro, filters permitting), (5) find the messages of ours that replies quote, and (6) write
// message.inbound and, the first time a number writes, sender.first_inbound.
import crypto from 'node:crypto';

import type { Queryable } from '../db/db.js';
import { recordReactions } from '../lifecycle/message-reactions.js';
import { type OutboxEvent, writeEvents } from '../lifecycle/write-events.js';
import { type Plan, PLAN_LIMITS } from '../plans/plans.js';
import { eventContentFields } from '../provider/inbound-content-view.js';
import type { InboundReferral } from '../provider/parse-inbound-content.js';
import type { InboundMessage } from '../provider/parse-webhook.js';
import { type KeyMove, moveRecipientKeys, recipientKey } from '../suppressions/recipient-keys.js';
import { suppressKeywordSenders } from '../suppressions/suppression-store.js';
import { recordInboundMedia } from './inbound-media-store.js';
import { claimReceptionRows, insertInboundMessages } from './inbound-store.js';
import { copyIdentities, forgetOldIdentities, learnIdentities, moveSenderKeys, upsertSenders } from './sender-store.js';

export type InboundAccount = { id: string; customerId: string; plan: Plan; channel: string };

export type Ingested =
  | { kind: 'duplicate' }
  | {
      kind: 'ingested';
      inboundMessageId: string;
      stored: boolean;
      from: string | null;
      firstInbound: boolean;
      eventData: Record<string, unknown>;
    };

export type InboundItem = { account: InboundAccount; message: InboundMessage };

type Filter = { chat_account_id: string; mode: 'off' | 'whitelist' | 'blacklist'; numbers: string[] };

function passes(filter: Filter | undefined, from: string | null): boolean {
  if (!filter || filter.mode === 'off' || from === null) return true;
  const listed = filter.numbers.includes(from);
  return filter.mode === 'whitelist' ? listed : !listed;
}

const key = (...parts: string[]) => parts.join('\u0000');

/** The batch's numbers: each item's sender number, known or resolved from its user id. */
type FromOf = (item: InboundItem) => string | null;
/** A number's row in the sender aggregate: new with this batch, and since when it writes. */
type SenderRow = { created: boolean; firstInboundAt: Date; referral: InboundReferral | null };

/** A jsonb column: parsed by the drivers, or JSON text. */
const parseJson = <T>(v: T | string | null): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
type Aggregate = {
  account: InboundAccount;
  phone: string;
  first: Date;
  last: Date;
  count: number;
  name: string;
  /** The ad or post of the batch's earliest message of this sender (kept if the row is new). */
  referral: InboundReferral | null;
};
export type Prepared = { item: InboundItem; from: string | null; id: string; stored: boolean };
type Quoted = { id: string; external_id: string };

export async function ingestBatch(tx: Queryable, items: InboundItem[]): Promise<Ingested[]> {
  const todo = await claimReceptions(tx, items);
  const fromOf = await resolveNumbers(tx, todo);
  const { agg, senders } = await countSenders(tx, todo, fromOf);
  // Opt-out keywords: a text that is one, whole, puts its sender on the account's list.
  await suppressKeywordSenders(
    tx,
    todo
      .filter((i) => i.message.messageType === 'text')
      .map((item) => ({
        accountId: item.account.id,
        customerId: item.account.customerId,
        phone: recipientKey(fromOf(item), item.message.userId), // a user id when no number is known
        text: item.message.text,
        at: item.message.receivedAt,
      })),
  );
  const prepared = await storeInbox(tx, todo, fromOf);
  await recordInboundMedia(tx, filesOf(prepared));
  const ours = await findQuoted(tx, prepared);
  await recordReactions(tx, prepared, (p, pm) => ours.get(key(p.item.account.id, pm)));
  const { events, results } = buildEvents(prepared, { agg, senders, ours });
  await writeEvents(tx, events);
  return items.map((item) => results.get(item) ?? { kind: 'duplicate' });
}

/** 1. Receptions: the first sight of (account, provider message id) wins, in this batch or any. */
async function claimReceptions(tx: Queryable, items: InboundItem[]): Promise<InboundItem[]> {
  const fresh = await claimReceptionRows(
    tx,
    items.map((i) => i.account.id),
    items.map((i) => i.message.providerMessageId),
  );
  const unclaimed = new Set(fresh.map((r) => key(r.chat_account_id, r.provider_message_id)));
  return items.filter((item) => unclaimed.delete(key(item.account.id, item.message.providerMessageId)));
}

/**
 * 2. Hidden numbers: follow user id changes, learn (identifier → number) pairs, then resolve
 *    identifiers alone.
 */
async function resolveNumbers(tx: Queryable, todo: InboundItem[]): Promise<FromOf> {
  await moveChangedUserIds(tx, todo);
  const learned = new Map<string, string>();
  for (const { account, message: m } of todo)
    if (m.userId && m.fromPhone) learned.set(key(account.id, m.userId), m.fromPhone);
  if (learned.size > 0) {
    const pairs = [...learned].map(([k, phone]) => [...k.split('\u0000'), phone] as [string, string, string]);
    // Only a pair that is new (or a changed number) returns: the rows kept under the id alone
    // move to the number then (decision 0036), not on every message of a known pair.
    const fresh = await learnIdentities(tx, pairs);
    await moveKeys(
      tx,
      fresh.map((r) => ({ accountId: r.chat_account_id, from: r.user_id, to: r.phone_e164 })),
    );
  }
  const unknown = todo.filter(
    ({ account, message: m }) => m.userId && !m.fromPhone && !learned.has(key(account.id, m.userId)),
  );
  if (unknown.length > 0) {
    const rows = await tx.query<{ chat_account_id: string; user_id: string; phone_e164: string }>(
      `SELECT s.chat_account_id, s.user_id, s.phone_e164 FROM sender_identities s
         JOIN unnest($1::uuid[], $2::text[]) AS t(a, u) ON s.chat_account_id = t.a AND s.user_id = t.u`,
      [unknown.map((i) => i.account.id), unknown.map((i) => i.message.userId)],
    );
    for (const r of rows) learned.set(key(r.chat_account_id, r.user_id), r.phone_e164);
  }
  return ({ account, message: m }) =>
    m.fromPhone ?? (m.userId ? (learned.get(key(account.id, m.userId)) ?? null) : null);
}

/**
 * 3. The aggregate, one row per (account, number) of the batch; the primary key makes exactly
 *    one insert win under concurrency, and firstInboundAt never changes afterwards.
 */
async function countSenders(
  tx: Queryable,
  todo: InboundItem[],
  fromOf: FromOf,
): Promise<{ agg: Map<string, Aggregate>; senders: Map<string, SenderRow> }> {
  const agg = new Map<string, Aggregate>();
  for (const item of todo) {
    // The recipient key (decision 0036): the number, else the user id when no number is known.
    const phone = recipientKey(fromOf(item), item.message.userId);
    if (!phone) continue;
    const k = key(item.account.id, phone);
    const a = agg.get(k) ?? {
      account: item.account,
      phone,
      first: item.message.receivedAt,
      last: item.message.receivedAt,
      count: 0,
      name: '',
      referral: item.message.content?.referral ?? null,
    };
    if (item.message.receivedAt < a.first) {
      a.first = item.message.receivedAt;
      a.referral = item.message.content?.referral ?? null;
    }
    if (item.message.receivedAt > a.last) a.last = item.message.receivedAt;
    a.count++;
    a.name = item.message.fromDisplayName || a.name;
    agg.set(k, a);
  }
  const senders = new Map<string, SenderRow>();
  if (agg.size === 0) return { agg, senders };
  const rows = [...agg.values()];
  const result = await upsertSenders(tx, [
    rows.map((r) => r.account.id),
    rows.map((r) => r.account.customerId),
    rows.map((r) => r.phone),
    rows.map((r) => r.first.toISOString()),
    rows.map((r) => r.last.toISOString()),
    rows.map((r) => r.count),
    rows.map((r) => r.name),
    rows.map((r) => (r.referral ? JSON.stringify(r.referral) : null)),
  ]);
  for (const r of result)
    senders.set(key(r.chat_account_id, r.phone_e164), {
      created: r.created,
      firstInboundAt: r.first_inbound_at,
      referral: parseJson<InboundReferral>(r.first_referral),
    });
  return { agg, senders };
}

/** 4. The inbox: plan Pro, and the account's filter. Every item gets its id; `stored` says if kept. */
async function storeInbox(tx: Queryable, todo: InboundItem[], fromOf: FromOf): Promise<Prepared[]> {
  const inboxAccounts = [...new Set(todo.filter((i) => PLAN_LIMITS[i.account.plan].inbox).map((i) => i.account.id))];
  const filters =
    inboxAccounts.length === 0
      ? []
      : await tx.query<Filter>(
          'SELECT chat_account_id, mode, numbers FROM inbox_filters WHERE chat_account_id = ANY($1::uuid[])',
          [inboxAccounts],
        );
  const filterOf = new Map(filters.map((f) => [f.chat_account_id, f]));
  const prepared = todo.map((item) => {
    const from = fromOf(item);
    return {
      item,
      from,
      id: crypto.randomUUID(),
      stored: PLAN_LIMITS[item.account.plan].inbox && passes(filterOf.get(item.account.id), from),
    };
  });
  const toStore = prepared.filter((p) => p.stored);
  if (toStore.length === 0) return prepared;
  await insertInboundMessages(tx, [
    toStore.map((p) => p.id),
    toStore.map((p) => p.item.account.customerId),
    toStore.map((p) => p.item.account.id),
    toStore.map((p) => p.item.account.channel),
    toStore.map((p) => p.item.message.providerMessageId),
    toStore.map((p) => p.from),
    toStore.map((p) => p.item.message.fromDisplayName),
    toStore.map((p) => p.item.message.messageType),
    toStore.map((p) => p.item.message.text),
    toStore.map((p) => p.item.message.displayText),
    toStore.map((p) => p.item.message.contextId),
    toStore.map((p) => p.item.message.receivedAt.toISOString()),
    toStore.map((p) => PLAN_LIMITS[p.item.account.plan].retentionDays),
    toStore.map((p) => p.item.message.userId),
    toStore.map((p) => (p.item.message.content ? JSON.stringify(p.item.message.content) : null)),
  ]);
  return prepared;
}

/** 4b. The files of stored messages, fetched by the inbound media fetcher (decision 0034). */
function filesOf(prepared: Prepared[]): Parameters<typeof recordInboundMedia>[1] {
  return prepared.flatMap(({ item: { account, message }, id, stored }) =>
    stored && message.file
      ? [
          {
            id: crypto.randomUUID(),
            inboundMessageId: id,
            customerId: account.customerId,
            accountId: account.id,
            receivedAt: message.receivedAt,
            media: message.file,
          },
        ]
      : [],
  );
}

/**
 * 5. Our messages that replies quote (the event's replyTo) and reactions react to: by account and
 *    provider id.
 */
async function findQuoted(tx: Queryable, prepared: Prepared[]): Promise<Map<string, Quoted>> {
  const targets = prepared.flatMap((p) =>
    [p.item.message.contextId, p.item.message.content?.reaction?.providerMessageId ?? null]
      .filter((pm): pm is string => pm !== null)
      .map((pm) => ({ accountId: p.item.account.id, pm })),
  );
  const ours = new Map<string, Quoted>();
  if (targets.length === 0) return ours;
  const rows = await tx.query<{ chat_account_id: string; provider_message_id: string } & Quoted>(
    `SELECT m.chat_account_id, m.provider_message_id, m.id, m.external_id FROM messages m
       JOIN unnest($1::uuid[], $2::text[]) AS t(a, pm) ON m.chat_account_id = t.a AND m.provider_message_id = t.pm`,
    [targets.map((t) => t.accountId), targets.map((t) => t.pm)],
  );
  for (const r of rows) ours.set(key(r.chat_account_id, r.provider_message_id), r);
  return ours;
}

/** 6. Events: message.inbound for each; sender.first_inbound for each number seen for the first time. */
function buildEvents(
  prepared: Prepared[],
  seen: { agg: Map<string, Aggregate>; senders: Map<string, SenderRow>; ours: Map<string, Quoted> },
): { events: OutboxEvent[]; results: Map<InboundItem, Ingested> } {
  const events: OutboxEvent[] = [];
  const firstDone = new Set<string>();
  const results = new Map<InboundItem, Ingested>();
  for (const { item, from, id, stored } of prepared) {
    const { account, message: m } = item;
    const quoted = m.contextId !== null ? seen.ours.get(key(account.id, m.contextId)) : undefined;
    const reactedTo = m.content?.reaction?.providerMessageId;
    const eventData = {
      inboundMessageId: id,
      chatAccountId: account.id,
      channel: account.channel,
      from,
      fromUserId: m.userId,
      fromDisplayName: m.fromDisplayName,
      messageType: m.messageType,
      text: m.text,
      receivedAt: m.receivedAt.toISOString(),
      ...(m.contextId !== null
        ? {
            replyTo: {
              providerMessageId: m.contextId,
              messageId: quoted?.id ?? null,
              externalId: quoted?.external_id ?? null,
            },
          }
        : {}),
      ...eventContentFields(m.content, reactedTo ? seen.ours.get(key(account.id, reactedTo)) : undefined),
    };
    events.push({ customerId: account.customerId, type: 'message.inbound', createdAt: new Date(), data: eventData });
    const sk = from ? key(account.id, from) : null;
    const sender = sk ? seen.senders.get(sk) : undefined;
    // The earliest message of the batch from a new number is the one that made it "first".
    const isFirst =
      sender?.created === true && !firstDone.has(sk!) && m.receivedAt.getTime() === seen.agg.get(sk!)!.first.getTime();
    if (isFirst) {
      firstDone.add(sk!);
      events.push({
        customerId: account.customerId,
        type: 'sender.first_inbound',
        createdAt: new Date(),
        data: {
          chatAccountId: account.id,
          channel: account.channel,
          from,
          fromDisplayName: m.fromDisplayName,
          firstInboundAt: sender!.firstInboundAt.toISOString(),
          inboundMessageId: stored ? id : null,
          ...(sender!.referral ? { referral: sender!.referral } : {}),
        },
      });
    }
    results.set(item, { kind: 'ingested', inboundMessageId: id, stored, from, firstInbound: isFirst, eventData });
  }
  return { events, results };
}

/**
 * A user's business-scoped id changed (`user_changed_user_id`): the number known for the old id
 * now belongs to the new one, and the old id is forgotten (decision 0015).
 */
async function moveChangedUserIds(tx: Queryable, items: InboundItem[]): Promise<void> {
  const moves = items.filter((i) => i.message.previousUserId && i.message.userId);
  if (moves.length === 0) return;
  const args = [
    moves.map((i) => i.account.id),
    moves.map((i) => i.message.previousUserId!),
    moves.map((i) => i.message.userId!),
  ];
  const known = await copyIdentities(tx, args);
  // What was kept under the old id alone (no number known) now belongs to the new id; rows kept
  // under a known number stay there (decision 0036).
  const phoneOf = new Map(known.map((r) => [key(r.chat_account_id, r.user_id), r.phone_e164]));
  await moveKeys(
    tx,
    moves.map((i) => ({
      accountId: i.account.id,
      from: i.message.previousUserId!,
      to: phoneOf.get(key(i.account.id, i.message.userId!)) ?? i.message.userId!,
    })),
  );
  await forgetOldIdentities(tx, args);
}

/** Moves every per-person row to its new recipient key: the sender aggregate, then the others. */
async function moveKeys(tx: Queryable, moves: KeyMove[]): Promise<void> {
  await moveSenderKeys(tx, moves);
  await moveRecipientKeys(tx, moves);
}
