// A person's recipient key moving on an account (decision 0036; suppressions/recipient-keys.ts
// moves every per-person row): the account's unsent messages addressed to the old key follow it.
import type { Queryable } from '../db/db.js';

/**
 * Moves the unsent messages of each move (parallel arrays: account ids, old keys, new keys) to the
 * new key: their recipient and, for a new user id, their recipientUserId. Sent messages keep the
 * key they were sent to.
 */
export async function moveUnsentRecipients(tx: Queryable, moves: string[][]): Promise<void> {
  await tx.query(
    `UPDATE messages m SET recipient = t.n,
        recipient_user_id = CASE WHEN t.n LIKE '+%' THEN m.recipient_user_id ELSE t.n END
       FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
      WHERE m.chat_account_id = t.a AND m.recipient_user_id = t.o AND m.recipient = t.o
        AND m.status IN ('pending', 'queued')`,
    moves,
  );
}
