// The one writer of portal_password_resets (issue #34 part 1, decision 0073): single-use reset
// links sent by mail, only the token's SHA-256 kept.
import type { Db } from '../db/db.js';

type Q = Pick<Db, 'query'>;

/** Every open link of the user stops working. */
export async function spendOpenResets(q: Q, userId: string): Promise<void> {
  await q.query('UPDATE portal_password_resets SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
}

export async function insertReset(q: Q, tokenHash: string, userId: string, minutes: number): Promise<void> {
  await q.query(
    `INSERT INTO portal_password_resets (token_hash, user_id, expires_at)
     VALUES ($1, $2, now() + make_interval(mins => $3))`,
    [tokenHash, userId, minutes],
  );
}

/** Spends one live link; false when it is unknown, used or expired. */
export async function spendReset(q: Q, tokenHash: string): Promise<boolean> {
  const spent = await q.query(
    `UPDATE portal_password_resets SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING 1`,
    [tokenHash],
  );
  return spent.length > 0;
}

/** The purger's pass: links past their expiry (used or not). */
export async function purgeResets(q: Q): Promise<number> {
  const rows = await q.query('DELETE FROM portal_password_resets WHERE expires_at < now() RETURNING 1');
  return rows.length;
}
