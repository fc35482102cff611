// Recipient keys (decision 0036): the key every per-person row (suppression list, sender
// aggregate, reply window, unsent messages) is kept under: the E.164 number when known, else the
// business-scoped user id itself (ids never start with `+`, numbers always do); the number an
// account last saw with an id (sender_identities, learned from inbound messages); moving keys.
import type { Queryable } from '../db/db.js';
import { moveUnsentRecipients } from '../lifecycle/move-recipients.js';

/** The recipient key of a person: the number when known, else the user id. */
export const recipientKey = (phone: string | null, userId: string | null): string | null => phone ?? userId;

/** The number this account last saw with this user id, or null. */
export async function phoneForUserId(q: Queryable, accountId: string, userId: string): Promise<string | null> {
  const [row] = await q.query<{ phone_e164: string }>(
    'SELECT phone_e164 FROM sender_identities WHERE chat_account_id = $1 AND user_id = $2',
    [accountId, userId],
  );
  return row?.phone_e164 ?? null;
}

/** A person's recipient key moving from one value to another on an account. */
export type KeyMove = { accountId: string; from: string; to: string };

/**
 * Moves per-person rows from one recipient key to another (a user id that changed, or a user id
 * whose number became known), in one statement per table: the sender aggregate (merged into the
 * new key's row when there is one; the earlier first contact keeps its ad referral), the suppression list (the existing entry of the new key
 * wins) and the account's unsent messages addressed to the old key (their recipient and, for a
 * new user id, their recipientUserId). Sent messages keep the key they were sent to.
 */
export async function moveRecipientKeys(tx: Queryable, moves: KeyMove[]): Promise<void> {
  const list = moves.filter((m) => m.from !== m.to);
  if (list.length === 0) return;
  const args = [list.map((m) => m.accountId), list.map((m) => m.from), list.map((m) => m.to)];
  await tx.query(
    `WITH old AS (
       DELETE FROM senders s USING unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
        WHERE s.chat_account_id = t.a AND s.phone_e164 = t.o
       RETURNING s.*, t.n)
     INSERT INTO senders AS s (chat_account_id, customer_id, phone_e164, first_inbound_at, last_inbound_at, inbound_count, display_name, first_referral)
     SELECT chat_account_id, customer_id, n, first_inbound_at, last_inbound_at, inbound_count, display_name, first_referral FROM old ORDER BY chat_account_id, n
     ON CONFLICT (chat_account_id, phone_e164) DO UPDATE SET
       first_referral = CASE WHEN EXCLUDED.first_inbound_at < s.first_inbound_at THEN EXCLUDED.first_referral ELSE s.first_referral END,
       first_inbound_at = least(s.first_inbound_at, EXCLUDED.first_inbound_at),
       last_inbound_at = greatest(s.last_inbound_at, EXCLUDED.last_inbound_at),
       inbound_count = s.inbound_count + EXCLUDED.inbound_count,
       display_name = COALESCE(s.display_name, EXCLUDED.display_name)`,
    args,
  );
  await tx.query(
    `UPDATE suppressions s SET phone_e164 = t.n FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
      WHERE s.chat_account_id = t.a AND s.phone_e164 = t.o
        AND NOT EXISTS (SELECT 1 FROM suppressions x WHERE x.chat_account_id = t.a AND x.phone_e164 = t.n)`,
    args,
  );
  await moveUnsentRecipients(tx, args);
}
