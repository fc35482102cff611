// Reactions to our messages (decision 0033): each user's current reaction to one of our messages,
// kept on every plan and shown on the message (GET /messages/{id} `reactions`). One row per
// (message, user); the newest reaction wins whatever order the provider delivers them in; an
// empty emoji (removal) keeps the row with a null emoji.
import type { Queryable } from '../db/db.js';
import type { OurMessage } from '../provider/inbound-content-view.js';

type Reacting = {
  item: {
    account: { id: string; customerId: string };
    message: {
      fromPhone: string | null;
      userId: string | null;
      receivedAt: Date;
      content?: { reaction: { emoji: string | null; providerMessageId: string | null } | null };
    };
  };
  from: string | null;
  id: string;
  stored: boolean;
};

export async function recordReactions(
  tx: Queryable,
  prepared: Reacting[],
  ourMessage: (p: Reacting, providerMessageId: string) => OurMessage,
): Promise<void> {
  const rows = prepared.flatMap((p) => {
    const r = p.item.message.content?.reaction;
    const target = r?.providerMessageId ? ourMessage(p, r.providerMessageId) : null;
    const reactor = p.from ?? p.item.message.userId;
    return r && target && reactor ? [{ p, emoji: r.emoji, messageId: target.id, reactor }] : [];
  });
  if (rows.length === 0) return;
  // One row per (message, reactor) in a statement: the batch's newest.
  const newest = new Map<string, (typeof rows)[number]>();
  for (const row of rows) {
    const k = `${row.messageId}\u0000${row.reactor}`;
    const seen = newest.get(k);
    if (!seen || seen.p.item.message.receivedAt <= row.p.item.message.receivedAt) newest.set(k, row);
  }
  const list = [...newest.values()];
  await tx.query(
    `INSERT INTO message_reactions AS r (message_id, reactor, customer_id, from_e164, from_user_id, emoji, reacted_at, inbound_message_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::uuid[])
     ON CONFLICT (message_id, reactor) DO UPDATE SET emoji = EXCLUDED.emoji, reacted_at = EXCLUDED.reacted_at,
       inbound_message_id = EXCLUDED.inbound_message_id, from_e164 = COALESCE(EXCLUDED.from_e164, r.from_e164)
     WHERE r.reacted_at <= EXCLUDED.reacted_at`,
    [
      list.map((r) => r.messageId),
      list.map((r) => r.reactor),
      list.map((r) => r.p.item.account.customerId),
      list.map((r) => r.p.from),
      list.map((r) => r.p.item.message.userId),
      list.map((r) => r.emoji),
      list.map((r) => r.p.item.message.receivedAt.toISOString()),
      list.map((r) => (r.p.stored ? r.p.id : null)),
    ],
  );
}

export type Reaction = {
  emoji: string;
  from: string | null;
  fromUserId: string | null;
  reactedAt: string;
  /** The reaction's inbound message, when the inbox kept it (plan Pro). */
  inboundMessageId: string | null;
};

/** The current reactions to one of our messages, oldest first. */
export async function reactionsTo(db: Queryable, messageId: string): Promise<Reaction[]> {
  const rows = await db.query<{
    emoji: string;
    from_e164: string | null;
    from_user_id: string | null;
    reacted_at: Date;
    inbound_message_id: string | null;
  }>(
    `SELECT emoji, from_e164, from_user_id, reacted_at, inbound_message_id FROM message_reactions
      WHERE message_id = $1 AND emoji IS NOT NULL ORDER BY reacted_at, reactor LIMIT 100`,
    [messageId],
  );
  return rows.map((r) => ({
    emoji: r.emoji,
    from: r.from_e164,
    fromUserId: r.from_user_id,
    reactedAt: r.reacted_at.toISOString(),
    inboundMessageId: r.inbound_message_id,
  }));
}
