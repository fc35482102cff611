// The one writer of portal_invitations (issue #34 part 1, decision 0073): one-time links that set
// a new user's password, only the token's SHA-256 kept.
import type { Db } from '../db/db.js';

type Q = Pick<Db, 'query'>;

/** Every open link of the user stops working. */
export async function spendOpenInvitations(q: Q, userId: string): Promise<void> {
  await q.query('UPDATE portal_invitations SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
}

export async function insertInvitation(q: Q, tokenHash: string, userId: string, expiresAt: Date): Promise<void> {
  await q.query('INSERT INTO portal_invitations (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
    tokenHash,
    userId,
    expiresAt.toISOString(),
  ]);
}

/** Spends one live link; false when it is unknown, used or expired. */
export async function spendInvitation(q: Q, tokenHash: string): Promise<boolean> {
  const rows = await q.query(
    `UPDATE portal_invitations SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
    [tokenHash],
  );
  return rows.length > 0;
}
