// The one writer of portal_sessions and portal_shown_once (issue #34 part 1, decision 0073): a
// session row per login (only the cookie id's SHA-256 kept), and the secrets a session keeps for
// the one page that shows them.
import type { Db } from '../db/db.js';

type Q = Pick<Db, 'query'>;

export async function insertSession(
  q: Q,
  s: { idHash: string; userId: string; customerId: string; csrfToken: string; at: Date; expiresAt: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO portal_sessions (id_hash, user_id, customer_id, csrf_token, created_at, last_seen_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $5, $6)`,
    [s.idHash, s.userId, s.customerId, s.csrfToken, s.at.toISOString(), s.expiresAt.toISOString()],
  );
}

export async function deleteSession(q: Q, idHash: string): Promise<void> {
  await q.query('DELETE FROM portal_sessions WHERE id_hash = $1', [idHash]);
}

/** Every session of the user ends, but the one `keepHash` names (a password change keeps its own). */
export async function endUserSessions(q: Q, userId: string, keepHash: string | null = null): Promise<void> {
  if (keepHash === null) await q.query('DELETE FROM portal_sessions WHERE user_id = $1', [userId]);
  else await q.query('DELETE FROM portal_sessions WHERE user_id = $1 AND id_hash <> $2', [userId, keepHash]);
}

export async function deleteExpiredUserSessions(q: Q, userId: string): Promise<void> {
  await q.query('DELETE FROM portal_sessions WHERE user_id = $1 AND expires_at < now()', [userId]);
}

export async function touchSession(q: Q, idHash: string): Promise<void> {
  await q.query('UPDATE portal_sessions SET last_seen_at = now() WHERE id_hash = $1', [idHash]);
}

export async function insertShownOnce(
  q: Q,
  s: { idHash: string; sessionHash: string; kind: string; valueEnc: string; minutes: number },
): Promise<void> {
  await q.query(`DELETE FROM portal_shown_once WHERE session_hash = $1 AND expires_at < now()`, [s.sessionHash]);
  await q.query(
    `INSERT INTO portal_shown_once (id_hash, session_hash, kind, value_enc, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(mins => $5))`,
    [s.idHash, s.sessionHash, s.kind, s.valueEnc, s.minutes],
  );
}

/** Deletes and returns the session's secret of `idHash` whose kind starts with `kindPrefix`. */
export async function takeShownOnce(
  q: Q,
  idHash: string,
  sessionHash: string,
  kindPrefix: string,
): Promise<{ kind: string; value_enc: string; expires_at: Date } | null> {
  const rows = await q.query<{ kind: string; value_enc: string; expires_at: Date }>(
    `DELETE FROM portal_shown_once WHERE id_hash = $1 AND session_hash = $2 AND starts_with(kind, $3)
     RETURNING kind, value_enc, expires_at`,
    [idHash, sessionHash, kindPrefix],
  );
  return rows[0] ?? null;
}

/** The purger's sweep: sessions past their absolute expiry and shown-once secrets nobody came back for. */
export async function purgeExpired(q: Q): Promise<number> {
  const shown = await q.query('DELETE FROM portal_shown_once WHERE expires_at < now() RETURNING 1');
  const sessions = await q.query('DELETE FROM portal_sessions WHERE expires_at < now() RETURNING 1');
  return shown.length + sessions.length;
}
