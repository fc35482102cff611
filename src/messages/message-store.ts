// Reading a customer's messages, for a caller: every query starts from the customer id, from the
// scoped account when the key has one, and a sandbox key reads sandbox messages only (decision
// 0024-sandbox-keys).
import { type Caller, readScope, type Scope } from '../auth/caller.js';
import type { Db, Queryable } from '../db/db.js';
import { type Reaction, reactionsTo } from '../lifecycle/message-reactions.js';
import { errors } from '../shared/errors.js';
import { keysetPage } from '../shared/keyset.js';
import { scopeWhere } from '../shared/scope.js';
import { CANCELLED_SQL } from '../shared/vocab.js';
import { type Message, MESSAGE_COLUMNS, type MessageRow, toMessage } from './message-view.js';

export type { Scope };

export type ListFilter = {
  status?: string;
  externalId?: string;
  providerMessageId?: string;
  channel?: string;
  chatAccountId?: string;
  broadcastId?: string;
  /** One recipient's messages (E.164): the portal's conversation view. */
  recipient?: string;
  /** Part of the recipient's number (digits, at most SEARCH_MAX characters): the portal's search. */
  recipientContains?: string;
  /** Part of the externalId (at most SEARCH_MAX characters, LIKE wildcards taken literally): the portal's search. */
  externalIdContains?: string;
  /** true: only scheduled sends still waiting for their time; false: every other message. */
  scheduled?: boolean;
  /** true: only messages that ended failed because they were cancelled (alone or with their broadcast); false: every other message. */
  cancelled?: boolean;
  /** Only messages whose last error has this code (RECIPIENT_OPTED_OUT…): the portal's overview links. */
  lastErrorCode?: string;
  since?: Date;
  until?: Date;
  limit: number;
  cursor?: string;
  /** The page above the one this cursor names (a page's prevCursor): the portal's "Previous page". */
  before?: string;
};

/** A message cancelled before it left (shared/vocab.ts). */
const CANCELLED = CANCELLED_SQL;

/** A scheduled send not picked up yet (the index messages_scheduled_at holds every scheduled send; this filters it). */
const WAITING_FOR_SCHEDULE = `scheduled_at IS NOT NULL AND status = 'pending'`;

/** The longest text a partial match takes (longer input is refused before any query). */
export const SEARCH_MAX = 200;

/** `text` as a LIKE pattern matching it anywhere, its wildcards (% _) and the escape (\\) taken literally. */
export function containsPattern(text: string): string {
  if (text.length === 0 || text.length > SEARCH_MAX)
    throw errors.validation([{ path: 'search', message: `must be 1 to ${SEARCH_MAX} characters` }]);
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The lookup of GET /messages/{id} in the scope: by messageId or by the caller's externalId, a
 * messageId match first.
 */
function lookup(scope: Scope, id: string): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'messages', params);
  params.push(id, UUID.test(id) ? id.toLowerCase() : null);
  const ext = `$${params.length - 1}`;
  const uid = `$${params.length}::uuid`;
  return {
    where: `${where.join(' AND ')} AND (external_id = ${ext} OR (${uid} IS NOT NULL AND id = ${uid}))
  ORDER BY (id = ${uid}) IS TRUE DESC LIMIT 1`,
    params,
  };
}

/** The message GET /messages/{id} would answer: its id and whether it is a sandbox message. */
export async function findMessageRow(
  q: Queryable,
  scope: Scope,
  id: string,
): Promise<{ id: string; sandbox: boolean } | null> {
  const { where, params } = lookup(scope, id);
  const [row] = await q.query<{ id: string; sandbox: boolean }>(
    `SELECT id, sandbox FROM messages WHERE ${where}`,
    params,
  );
  return row ?? null;
}

/** Whether the customer has a message with this externalId (an accepted send's repeat). */
export async function messageExists(q: Queryable, customerId: string, externalId: string): Promise<boolean> {
  const rows = await q.query('SELECT 1 FROM messages WHERE customer_id = $1 AND external_id = $2', [
    customerId,
    externalId,
  ]);
  return rows.length > 0;
}
/** What GET /messages filters on; `chatAccountId` narrows the caller's scope (404 / 403 outside it). */
export type ListQuery = Omit<ListFilter, 'chatAccountId'> & { chatAccountId?: string };

/**
 * A message's words, for the portal's CSV export: a text's text, a file's caption, a template's
 * name then its body values, an interactive message's body text.
 */
const CONTENT_WORDS = `CASE content->>'type'
    WHEN 'text' THEN content->>'text'
    WHEN 'template' THEN concat_ws(': ', content->'template'->>'name',
      (SELECT string_agg(v, ' | ') FROM jsonb_array_elements_text(
         CASE WHEN jsonb_typeof(content->'template'->'components'->'body') = 'array'
              THEN content->'template'->'components'->'body' ELSE '[]'::jsonb END) AS v))
    WHEN 'interactive' THEN content->'interactive'->'body'->>'text'
    ELSE content->>'caption' END`;

export function createMessageQueries(db: Db) {
  const queries = {
    /** By messageId or by the caller's externalId, in the caller's scope; a messageId match wins. */
    get: (caller: Caller, id: string): Promise<Message & { reactions: Reaction[] }> =>
      queries.getInScope(readScope(caller), id),

    /** Newest first, in the caller's scope narrowed by `chatAccountId`. */
    list: (caller: Caller, q: ListQuery) =>
      queries.listInScope(readScope(caller, q.chatAccountId), { ...q, chatAccountId: undefined }),

    /** GET /messages/{id} for a scope already resolved from a caller, with the users' reactions to it. */
    async getInScope(scope: Scope, id: string): Promise<Message & { reactions: Reaction[] }> {
      const { where, params } = lookup(scope, id);
      const rows = await db.query<MessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${where}`, params);
      const r = rows[0];
      if (!r) throw errors.messageNotFound();
      return { ...toMessage(r), reactions: await reactionsTo(db, r.id) };
    },

    /** Newest first; the cursor is the (createdAt, id) of the last row of the previous page. */
    async listInScope(scope: Scope, f: ListFilter): Promise<{ messages: Message[]; nextCursor: string | null }> {
      const page = await queries.pageInScope(scope, f);
      return { messages: page.messages, nextCursor: page.nextCursor };
    },

    /**
     * `list` for the portal's search and CSV export: each message with its content's kind
     * (`text`, `template`, `image`…, which the API's Message does not carry) and the cursor of the page above.
     */
    search: (caller: Caller, q: ListQuery) =>
      queries.pageInScope(readScope(caller, q.chatAccountId), { ...q, chatAccountId: undefined }),

    async pageInScope(scope: Scope, f: ListFilter) {
      const params: unknown[] = [];
      const where = scopeWhere(scope, 'messages', params);
      const add = (clause: (n: string) => string, value: unknown) => {
        params.push(value);
        where.push(clause(`$${params.length}`));
      };
      if (f.chatAccountId !== undefined) add((n) => `chat_account_id = ${n}::uuid`, f.chatAccountId);
      if (f.status !== undefined) add((n) => `status = ${n}`, f.status);
      if (f.externalId !== undefined) add((n) => `external_id = ${n}`, f.externalId);
      if (f.providerMessageId !== undefined) add((n) => `provider_message_id = ${n}`, f.providerMessageId);
      if (f.channel !== undefined) add((n) => `channel = ${n}`, f.channel);
      if (f.broadcastId !== undefined) add((n) => `broadcast_id = ${n}::uuid`, f.broadcastId);
      if (f.recipient !== undefined) add((n) => `recipient = ${n}`, f.recipient);
      // Partial matches: a LIKE on the customer's rows walked newest first through
      // messages_customer_created, stopping at the page's LIMIT (decision 0043).
      if (f.recipientContains !== undefined)
        add((n) => `recipient LIKE ${n} ESCAPE '\\'`, containsPattern(f.recipientContains));
      if (f.externalIdContains !== undefined)
        add((n) => `external_id LIKE ${n} ESCAPE '\\'`, containsPattern(f.externalIdContains));
      if (f.scheduled !== undefined) where.push(`${f.scheduled ? '' : 'NOT '}(${WAITING_FOR_SCHEDULE})`);
      if (f.cancelled !== undefined) where.push(`${f.cancelled ? '' : 'NOT '}(${CANCELLED})`);
      if (f.lastErrorCode !== undefined) add((n) => `last_error_code = ${n}`, f.lastErrorCode);
      if (f.since !== undefined) add((n) => `created_at >= ${n}::timestamptz`, f.since.toISOString());
      if (f.until !== undefined) add((n) => `created_at <= ${n}::timestamptz`, f.until.toISOString());
      const page = await keysetPage<MessageRow & { content_kind: string | null; content_words: string | null }>(
        db,
        {
          select: `SELECT ${MESSAGE_COLUMNS}, content->>'type' AS content_kind, ${CONTENT_WORDS} AS content_words FROM messages`,
          where,
          params,
        },
        f,
      );
      const now = new Date();
      return {
        messages: page.rows.map((r) => toMessage(r, now)),
        contentKinds: page.rows.map((r) => r.content_kind ?? ''),
        /** The message's words: a text's text, a file's caption, a template's name and values (` | ` between). */
        contentWords: page.rows.map((r) => r.content_words ?? ''),
        nextCursor: page.nextCursor,
        prevCursor: page.prevCursor,
      };
    },
  };
  return queries;
}

export type MessageQueries = ReturnType<typeof createMessageQueries>;
