// One number's conversation on an account (the portal's conversation view, decision 0039): its
// inbound messages (the inbox, plan Pro) and our messages to it, in one time order, newest page
// first. Built on the inbox's and the message list's own reads, so their rules apply unchanged:
// the caller's accounts (another customer's account is not found), scope and sandbox rule.
import { type Caller, callerAccount, callerPhone, requirePlan } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import type { MessageQueries } from '../messages/message-store.js';
import type { Message } from '../messages/message-view.js';
import type { SenderService } from '../senders/sender-service.js';
import { encodeCursor } from '../shared/cursor.js';
import { errors } from '../shared/errors.js';

/** Messages per page of a conversation (inbound and outbound together). */
export const CONVERSATION_PAGE = 30;

type Inbound = Awaited<ReturnType<SenderService['inboundMessage']>>;

export type ConversationItem =
  | { direction: 'in'; at: string; id: string; inbound: Inbound }
  | { direction: 'out'; at: string; id: string; message: Message; content: unknown };

export type ConversationService = ReturnType<typeof createConversationService>;

/** Newest first by (time, id), as both lists and their cursors order rows. */
const newestFirst = (a: { at: string; id: string }, b: { at: string; id: string }) =>
  a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

export function createConversationService(deps: { db: Db; senders: SenderService; messages: MessageQueries }) {
  const { db, senders, messages } = deps;
  return {
    /**
     * A page of the conversation with `phone` (as the caller wrote it) on `accountId`, newest
     * first; `cursor` continues after the last item of the previous page. With the number's
     * sender (its reply window). 404 for an account that is not the caller's or a number that is
     * not one.
     */
    async read(caller: Caller, accountId: string, phone: string, cursor?: string) {
      requirePlan(caller, 'inbox');
      const account = callerAccount(caller, accountId);
      let e164: string;
      try {
        e164 = callerPhone(caller, phone, 'phone');
      } catch {
        throw errors.notFound();
      }
      const limit = CONVERSATION_PAGE;
      const [inbox, sent, sender] = await Promise.all([
        senders.inbox(caller, { chatAccountId: account.id, from: e164, limit, cursor }),
        messages.list(caller, { chatAccountId: account.id, recipient: e164, limit, cursor }),
        senders.lookupOne(caller, e164, account.id),
      ]);
      const contents = await contentsOf(
        db,
        caller.tenant.customerId,
        sent.messages.map((m) => m.messageId),
      );
      const merged: ConversationItem[] = [
        ...inbox.inboundMessages.map((i): ConversationItem => ({
          direction: 'in',
          at: i.receivedAt,
          id: i.inboundMessageId,
          inbound: i,
        })),
        ...sent.messages.map((m): ConversationItem => ({
          direction: 'out',
          at: m.createdAt,
          id: m.messageId,
          message: m,
          content: contents.get(m.messageId) ?? null,
        })),
      ].sort(newestFirst);
      const items = merged.slice(0, limit);
      const more = merged.length > limit || inbox.nextCursor !== null || sent.nextCursor !== null;
      const last = items.at(-1);
      return {
        account,
        phone: e164,
        sender,
        items,
        nextCursor: more && last ? encodeCursor({ createdAt: new Date(last.at), id: last.id }) : null,
      };
    },
  };
}

/** The stored content of our messages (what each sent), by id. */
async function contentsOf(db: Db, customerId: string, ids: string[]): Promise<Map<string, unknown>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; content: unknown }>(
    'SELECT id, content FROM messages WHERE customer_id = $1 AND id = ANY($2::uuid[])',
    [customerId, ids],
  );
  return new Map(
    rows.map((r) => [r.id, typeof r.content === 'string' ? (JSON.parse(r.content) as unknown) : r.content]),
  );
}
