// Recipient keys (decision 0036): the key every per-person row (suppression list, sender
// aggregate, reply window, unsent messages) is kept under: the E.164 number when known, else the
// business-scoped user id itself (ids never start with `+`, numbers always do); the number an
// account last saw with an id (sender_identities, learned from inbound messages); moving keys.
import type { Queryable } from '../db/db.js';
import { moveUnsentRecipients } from '../lifecycle/move-recipients.js';
import { moveSuppressionKeys } from './suppression-store.js';

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
 * whose number became known), in one statement per table (the sender aggregate moves first, with
 * inbound/sender-store.ts moveSenderKeys): the suppression list (the existing entry of the new key
 * wins) and the account's unsent messages addressed to the old key (their recipient and, for a
 * new user id, their recipientUserId). Sent messages keep the key they were sent to.
 */
export async function moveRecipientKeys(tx: Queryable, moves: KeyMove[]): Promise<void> {
  const list = moves.filter((m) => m.from !== m.to);
  if (list.length === 0) return;
  const args = [list.map((m) => m.accountId), list.map((m) => m.from), list.map((m) => m.to)];
  await moveSuppressionKeys(tx, args);
  await moveUnsentRecipients(tx, args);
}
