// The provider's customer-service window: free text, images and documents reach a number only
// within 24 hours of its last inbound message. The window is half-open: [last, last + 24 h). At
// exactly 24 h after the last inbound it is closed (decision 0014).
import type { Queryable } from '../db/db.js';

export const REPLY_WINDOW_MS = 24 * 3600_000;

/** When the window closes; null when the number never wrote. */
export const replyWindowExpiresAt = (lastInboundAt: Date | null): Date | null =>
  lastInboundAt === null ? null : new Date(lastInboundAt.getTime() + REPLY_WINDOW_MS);

export function isReplyWindowOpen(lastInboundAt: Date | null, now: Date): boolean {
  const expires = replyWindowExpiresAt(lastInboundAt);
  return expires !== null && now.getTime() < expires.getTime();
}

/** The last inbound time of each (account, number) pair that ever wrote, keyed `account\0phone`. */
export async function lastInboundAmong(
  q: Queryable,
  pairs: { accountId: string; phone: string }[],
): Promise<Map<string, Date>> {
  if (pairs.length === 0) return new Map();
  const rows = await q.query<{ chat_account_id: string; phone_e164: string; last_inbound_at: Date }>(
    `SELECT s.chat_account_id, s.phone_e164, s.last_inbound_at FROM senders s
       JOIN unnest($1::uuid[], $2::text[]) AS t(a, p) ON s.chat_account_id = t.a AND s.phone_e164 = t.p`,
    [pairs.map((p) => p.accountId), pairs.map((p) => p.phone)],
  );
  return new Map(rows.map((r) => [`${r.chat_account_id}\u0000${r.phone_e164}`, r.last_inbound_at]));
}
