// The one writer of portal_totp, portal_recovery_codes and portal_login_challenges (issue #34
// part 1, decision 0073): a user's authenticator secret (sealed), their recovery codes (hashes)
// and the login's code step.
import type { Db } from '../db/db.js';

type Q = Pick<Db, 'query'>;

/** A new secret waiting for its first code (replacing one that waits); false when two-factor is on. */
export async function putPendingSecret(q: Q, userId: string, secretEnc: string): Promise<boolean> {
  const rows = await q.query(
    `INSERT INTO portal_totp (user_id, secret_enc) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET secret_enc = EXCLUDED.secret_enc, last_step = NULL, created_at = now()
       WHERE portal_totp.enabled_at IS NULL
     RETURNING 1`,
    [userId, secretEnc],
  );
  return rows.length > 0;
}

/** Takes the time step of an accepted code; false when it (or a later one) was taken already (replay). */
export async function takeTotpStep(q: Q, userId: string, step: number): Promise<boolean> {
  const taken = await q.query(
    `UPDATE portal_totp SET last_step = $2 WHERE user_id = $1 AND (last_step IS NULL OR last_step < $2) RETURNING 1`,
    [userId, step],
  );
  return taken.length === 1;
}

/** Turns the waiting secret on; false when it already was. */
export async function enableTotp(q: Q, userId: string): Promise<boolean> {
  const on = await q.query(
    'UPDATE portal_totp SET enabled_at = now() WHERE user_id = $1 AND enabled_at IS NULL RETURNING 1',
    [userId],
  );
  return on.length > 0;
}

/** The user's recovery codes are these (hashes) from now on. */
export async function replaceRecoveryCodes(q: Q, userId: string, hashes: string[]): Promise<void> {
  await q.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
  await q.query('INSERT INTO portal_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [
    userId,
    hashes,
  ]);
}

/** Spends one unused recovery code; false when it was spent meanwhile. */
export async function spendRecoveryCode(q: Q, userId: string, hash: string): Promise<boolean> {
  const spent = await q.query(
    `UPDATE portal_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING 1`,
    [userId, hash],
  );
  return spent.length === 1;
}

/** Two-factor sign-in off: the secret, the recovery codes and any login's code step go. */
export async function removeTwoFactor(q: Q, userId: string): Promise<void> {
  await q.query('DELETE FROM portal_totp WHERE user_id = $1', [userId]);
  await q.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
  await endChallenges(q, userId);
}

export async function insertChallenge(q: Q, idHash: string, userId: string, minutes: number): Promise<void> {
  await q.query('DELETE FROM portal_login_challenges WHERE user_id = $1 AND expires_at < now()', [userId]);
  await q.query(
    `INSERT INTO portal_login_challenges (id_hash, user_id, expires_at)
     VALUES ($1, $2, now() + make_interval(mins => $3))`,
    [idHash, userId, minutes],
  );
}

/** Ends one login's code step; false when it was already ended (used twice). */
export async function spendChallenge(q: Q, idHash: string): Promise<boolean> {
  const spent = await q.query('DELETE FROM portal_login_challenges WHERE id_hash = $1 RETURNING 1', [idHash]);
  return spent.length > 0;
}

/** Every pending login code step of the user ends (a password reset, two-factor off). */
export async function endChallenges(q: Q, userId: string): Promise<void> {
  await q.query('DELETE FROM portal_login_challenges WHERE user_id = $1', [userId]);
}

export async function purgeChallenges(q: Q): Promise<number> {
  const rows = await q.query('DELETE FROM portal_login_challenges WHERE expires_at < now() RETURNING 1');
  return rows.length;
}
