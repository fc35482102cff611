// The earlier message a send replies to (`replyTo`) or reacts to (a reaction), found at accept
// time in the caller's own messages (decision 0032): ours by messageId or externalId, or an
// inbound one by inboundMessageId. Another customer's message, another account's for a scoped
// key, and a live one for a sandbox key are not found (404 message_not_found, as GET
// /messages/{id} answers); one of another conversation (another account or phone number) is a
// validation error naming the path.
import type { Principal } from '../auth/directory.js';
import type { Queryable } from '../db/db.js';
import type { ReplyTarget } from '../shared/content.js';
import { errors } from '../shared/errors.js';
import { type Scope, scopeWhere, seesNothing } from '../shared/scope.js';

export type MessageRef = { messageId?: string; externalId?: string; inboundMessageId?: string };

/**
 * The conversation a send belongs to: its account and the other party's recipient key (the
 * number, or the user id while no number is known: decision 0036), and the user id the send named.
 */
export type Conversation = { customerId: string; accountId: string; phone: string; userId?: string | null };

/** The caller's read scope: its customer, the key's account, the key's sandbox world. */
const scopeOf = (principal: Principal, c: Conversation): Scope => ({
  customerId: c.customerId,
  accountId: principal.scopeAccountId,
  sandboxOnly: principal.sandbox,
});

const invalid = (path: string, message: string) => errors.validation([{ path, message }]);

const NOT_A_REACTION = 'is a reaction: a reaction cannot be replied or reacted to';
const SAME_CONVERSATION = 'must be a message of the same conversation (the same chat account and phone number)';

/** Ours: by id or by the caller's externalId. */
async function ourMessage(q: Queryable, principal: Principal, c: Conversation, ref: MessageRef, path: string) {
  const byId = ref.messageId?.toLowerCase() ?? null;
  const params: unknown[] = [];
  const where = scopeWhere(scopeOf(principal, c), 'messages', params);
  params.push(byId, ref.externalId ?? null);
  const [uid, ext] = [`$${params.length - 1}::uuid`, `$${params.length}`];
  const [row] = await q.query<{
    id: string;
    chat_account_id: string;
    recipient: string;
    sandbox: boolean;
    status: string;
    provider_message_id: string | null;
    type: string;
  }>(
    `SELECT id, chat_account_id, recipient, sandbox, status, provider_message_id, content->>'type' AS type
       FROM messages
      WHERE ${where.join(' AND ')}
        AND ((${uid} IS NOT NULL AND id = ${uid}) OR (${uid} IS NULL AND external_id = ${ext}))
      LIMIT 1`,
    params,
  );
  if (!row) throw errors.messageNotFound();
  if (row.sandbox !== principal.sandbox)
    throw invalid(path, 'is a sandbox message: only a sandbox send may reply or react to it');
  if (row.chat_account_id !== c.accountId || row.recipient !== c.phone) throw invalid(path, SAME_CONVERSATION);
  if (row.type === 'reaction') throw invalid(path, NOT_A_REACTION);
  if (row.status === 'failed' && row.provider_message_id === null)
    throw invalid(path, 'failed without being sent: the provider has nothing to reply or react to');
  return { messageId: row.id, ...(row.provider_message_id ? { providerMessageId: row.provider_message_id } : {}) };
}

/** An inbound message of the inbox (plan Pro stores them): never for a sandbox key. */
async function inboundMessage(q: Queryable, principal: Principal, c: Conversation, id: string, path: string) {
  const scope = scopeOf(principal, c);
  if (seesNothing(scope, 'inbound_messages')) throw errors.messageNotFound();
  const params: unknown[] = [];
  const where = scopeWhere(scope, 'inbound_messages', params);
  params.push(id.toLowerCase());
  const [row] = await q.query<{
    id: string;
    chat_account_id: string;
    from_e164: string | null;
    from_user_id: string | null;
    provider_message_id: string;
    message_type: string;
  }>(
    `SELECT id, chat_account_id, from_e164, from_user_id, provider_message_id, message_type FROM inbound_messages
      WHERE ${where.join(' AND ')} AND id = $${params.length}::uuid`,
    params,
  );
  if (!row) throw errors.messageNotFound();
  // The same person: by number, or by user id (a sender who hid their number, issue #35).
  const samePerson =
    (row.from_e164 !== null && row.from_e164 === c.phone) ||
    (row.from_user_id !== null && (row.from_user_id === c.phone || row.from_user_id === c.userId));
  if (row.chat_account_id !== c.accountId || !samePerson) throw invalid(path, SAME_CONVERSATION);
  if (row.message_type === 'reaction') throw invalid(path, NOT_A_REACTION);
  return { inboundMessageId: row.id, providerMessageId: row.provider_message_id };
}

/** The target of `ref` (given at `path`, e.g. `replyTo` or `content.reaction`) in this conversation. */
export async function findReplyTarget(
  q: Queryable,
  principal: Principal,
  conversation: Conversation,
  ref: MessageRef,
  path: string,
): Promise<ReplyTarget> {
  if (ref.inboundMessageId !== undefined)
    return inboundMessage(q, principal, conversation, ref.inboundMessageId, `${path}.inboundMessageId`);
  return ourMessage(
    q,
    principal,
    conversation,
    ref,
    `${path}.${ref.messageId !== undefined ? 'messageId' : 'externalId'}`,
  );
}
