// Reading the sender aggregate ("has this number written to me?") and the inbox (Pro), for a
// caller: its accounts and scope, its numbers in its default country, the plan of the inbox, and
// the sandbox rule (simulated lookups, an empty inbox: decision 0024-sandbox-keys).
import { type Caller, callerAccount, callerPhone, callerPhones, readScope, requirePlan } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { contentFields } from '../provider/inbound-content-view.js';
import type { InboundContent, InboundReferral } from '../provider/parse-inbound-content.js';
import { errors } from '../shared/errors.js';
import { checkCursor, keysetPage } from '../shared/keyset.js';
import { type Scope, scopeWhere, seesNothing } from '../shared/scope.js';
import { suppressedAmong, suppressionKey } from '../suppressions/suppression-store.js';
import { type InboundMediaColumns, MEDIA_COLUMNS, withFetch } from './inbound-media-view.js';
import { replyWindowExpiresAt } from './reply-window.js';

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null);

export type Sender = {
  phoneE164: string;
  chatAccountId: string;
  hasWritten: boolean;
  firstInboundAt: string | null;
  lastInboundAt: string | null;
  inboundCount: number;
  sandbox: boolean;
  /** On this account's suppression list (decision 0014), and since when. */
  optedOut: boolean;
  optedOutAt: string | null;
  /** lastInboundAt + 24 h; null when the number never wrote. Free text needs it in the future. */
  replyWindowExpiresAt: string | null;
  /** The click-to-chat ad or post of the sender's first message; only when it came from one (issue #35). */
  firstReferral?: InboundReferral;
};

/** Sandbox keys: numbers ending in 77 have written (three times), no other has. */
function simulated(phone: string, accountId: string, now: Date): Sender {
  const wrote = phone.endsWith('77');
  return {
    phoneE164: phone,
    chatAccountId: accountId,
    hasWritten: wrote,
    firstInboundAt: wrote ? new Date(now.getTime() - 7 * 86400_000).toISOString() : null,
    lastInboundAt: wrote ? new Date(now.getTime() - 3600_000).toISOString() : null,
    inboundCount: wrote ? 3 : 0,
    sandbox: true,
    optedOut: false,
    optedOutAt: null,
    replyWindowExpiresAt: wrote ? new Date(now.getTime() - 3600_000 + 86400_000).toISOString() : null,
  };
}

export type SenderService = ReturnType<typeof createSenderService>;

/** What GET /inbound-messages reads: `from` as the caller wrote it, the dates already read. */
export type InboxQuery = {
  chatAccountId?: string;
  from?: string;
  since?: Date;
  until?: Date;
  limit: number;
  cursor?: string;
};

/** The columns of INBOX_SELECT the inbox reads (of `i.*`, and the messages replied and reacted to). */
type InboxRow = {
  id: string;
  chat_account_id: string;
  channel: string;
  from_e164: string | null;
  from_user_id: string | null;
  from_display_name: string;
  message_type: string;
  text: string | null;
  display_text: string | null;
  received_at: Date;
  reply_to_provider_message_id: string | null;
  reply_message_id: string | null;
  reply_external_id: string | null;
  /** jsonb: parsed by the drivers, or JSON text. */
  content: InboundContent | string | null;
  reaction_message_id: string | null;
  reaction_external_id: string | null;
  /** The file's fetch (decision 0034; MEDIA_COLUMNS) and the read mark. */
  read_at: Date | null;
} & InboundMediaColumns;

export function createSenderService(deps: { db: Db }) {
  const { db } = deps;
  return {
    /** The sender of one number (`phone` as the caller wrote it) on an account of the caller's. */
    async lookupOne(caller: Caller, phone: string, chatAccountId: string | undefined): Promise<Sender> {
      const account = callerAccount(caller, chatAccountId);
      const [sender] = await lookup(db, caller, account.id, [callerPhone(caller, phone, 'phone')]);
      return sender!;
    },

    /** Up to 200 numbers at once: each unreadable one named (`phones.<i>`), then the account. */
    async lookupMany(caller: Caller, phones: string[], chatAccountId: string | undefined): Promise<Sender[]> {
      const e164s = callerPhones(caller, phones, 'phones');
      return lookup(db, caller, callerAccount(caller, chatAccountId).id, e164s);
    },

    /** The inbox (plan Pro) in the caller's scope; a sandbox key's is always empty (its cursor is still checked). */
    async inbox(caller: Caller, q: InboxQuery) {
      requirePlan(caller, 'inbox');
      const scope = readScope(caller, q.chatAccountId);
      const page = {
        from: q.from !== undefined ? callerPhone(caller, q.from, 'from') : undefined,
        since: q.since,
        until: q.until,
        limit: q.limit,
        cursor: q.cursor,
      };
      if (!seesNothing(scope, 'inbound_messages')) return readInbox(db, scope, page);
      checkCursor(q.cursor);
      return { inboundMessages: [], nextCursor: null };
    },

    /** One inbound message of the inbox (plan Pro) in the caller's scope; a sandbox key sees none. */
    async inboundMessage(caller: Caller, id: string) {
      requirePlan(caller, 'inbox');
      const scope = readScope(caller);
      const params: unknown[] = [id];
      const where = ['i.id = $1::uuid', ...scopeWhere(scope, 'inbound_messages', params, 'i')];
      const rows = seesNothing(scope, 'inbound_messages')
        ? []
        : await db.query<InboxRow>(`${INBOX_SELECT} WHERE ${where.join(' AND ')}`, params);
      if (!rows[0]) throw errors.inboundMessageNotFound();
      return toInbound(rows[0]);
    },
  };
}

/** One entry per distinct number, from one query; numbers that never wrote included. Simulated for a sandbox key. */
async function lookup(db: Db, caller: Caller, accountId: string, phones: string[]): Promise<Sender[]> {
  const scope: Scope = { customerId: caller.tenant.customerId, accountId, sandboxOnly: caller.principal.sandbox };
  const distinct = [...new Set(phones)];
  if (seesNothing(scope, 'senders')) {
    const now = new Date();
    return distinct.map((p) => simulated(p, accountId, now));
  }
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'senders', params);
  params.push(distinct);
  const rows = await db.query<{
    phone_e164: string;
    first_inbound_at: Date;
    last_inbound_at: Date;
    inbound_count: number;
    first_referral: InboundReferral | string | null;
  }>(
    `SELECT phone_e164, first_inbound_at, last_inbound_at, inbound_count, first_referral FROM senders
        WHERE ${where.join(' AND ')} AND phone_e164 = ANY($${params.length}::text[])`,
    params,
  );
  const found = new Map(rows.map((r) => [r.phone_e164, r]));
  const suppressed = await suppressedAmong(
    db,
    distinct.map((phone) => ({ accountId, phone })),
  );
  return distinct.map((phone) => {
    const r = found.get(phone);
    const optedOutAt = suppressed.get(suppressionKey(accountId, phone));
    return {
      phoneE164: phone,
      chatAccountId: accountId,
      hasWritten: r !== undefined,
      firstInboundAt: iso(r?.first_inbound_at),
      lastInboundAt: iso(r?.last_inbound_at),
      inboundCount: r ? r.inbound_count : 0,
      sandbox: false,
      optedOut: optedOutAt !== undefined,
      optedOutAt: iso(optedOutAt),
      replyWindowExpiresAt: iso(replyWindowExpiresAt(r?.last_inbound_at ?? null)),
      // Only when the first message came from an ad or post: the spec's shape otherwise unchanged.
      ...(r?.first_referral
        ? {
            firstReferral:
              typeof r.first_referral === 'string'
                ? (JSON.parse(r.first_referral) as InboundReferral)
                : r.first_referral,
          }
        : {}),
    };
  });
}

/** The inbox, newest first; replyTo resolved to our message while it still exists. */
async function readInbox(
  db: Db,
  scope: Scope,
  f: { from?: string; since?: Date; until?: Date; limit: number; cursor?: string },
) {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'inbound_messages', params, 'i');
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (f.from !== undefined) add((n) => `i.from_e164 = ${n}`, f.from);
  if (f.since !== undefined) add((n) => `i.received_at >= ${n}::timestamptz`, f.since.toISOString());
  if (f.until !== undefined) add((n) => `i.received_at <= ${n}::timestamptz`, f.until.toISOString());
  const page = await keysetPage<InboxRow>(
    db,
    { select: INBOX_SELECT, where, params, key: { at: 'i.received_at', id: 'i.id' } },
    f,
  );
  return {
    inboundMessages: page.rows.map(toInbound),
    nextCursor: page.nextCursor,
  };
}

/** An inbound message with our messages its reply and reaction point at (while they exist). */
const INBOX_SELECT = `SELECT i.*, m.id AS reply_message_id, m.external_id AS reply_external_id,
         rx.id AS reaction_message_id, rx.external_id AS reaction_external_id, ${MEDIA_COLUMNS}
    FROM inbound_messages i
    LEFT JOIN inbound_media f ON f.inbound_message_id = i.id
    LEFT JOIN LATERAL (SELECT id, external_id FROM messages m WHERE m.chat_account_id = i.chat_account_id
                         AND m.provider_message_id = i.reply_to_provider_message_id LIMIT 1) m ON true
    LEFT JOIN LATERAL (SELECT id, external_id FROM messages m WHERE m.chat_account_id = i.chat_account_id
                         AND m.provider_message_id = i.content->'reaction'->>'providerMessageId' LIMIT 1) rx ON true`;

/** The public Inbound message: the spec's fields, then the content by kind (decision 0033). */
function toInbound(r: InboxRow) {
  const content = typeof r.content === 'string' ? (JSON.parse(r.content) as InboundContent) : r.content;
  const fields = contentFields(
    content,
    r.reaction_message_id ? { id: r.reaction_message_id, external_id: r.reaction_external_id! } : null,
  );
  return {
    inboundMessageId: r.id,
    chatAccountId: r.chat_account_id,
    channel: r.channel,
    from: r.from_e164,
    fromUserId: r.from_user_id,
    fromDisplayName: r.from_display_name,
    messageType: r.message_type,
    text: r.text,
    displayText: r.display_text,
    receivedAt: iso(r.received_at)!,
    replyTo: r.reply_to_provider_message_id
      ? {
          providerMessageId: r.reply_to_provider_message_id,
          messageId: r.reply_message_id,
          externalId: r.reply_external_id,
        }
      : null,
    ...fields,
    // The fetch of the file beside its description, and the read mark (decision 0034).
    media: withFetch(fields.media, r),
    readAt: iso(r.read_at),
  };
}
