// The one writer of portal_users (issue #34 part 1, decision 0073): every insert and update of a
// portal user goes through here, inside the caller's transaction where it has one.
import type { Db } from '../db/db.js';
import type { PortalRole } from './roles.js';

type Q = Pick<Db, 'query'>;

export const USER_COLUMNS = 'id, customer_id, email, role, password_hash, disabled_at, created_at';

/** A row of USER_COLUMNS as the database returns it. */
export type UserRow = {
  id: string;
  customer_id: string;
  email: string;
  role: PortalRole;
  password_hash: string | null;
  disabled_at: Date | null;
  created_at: Date;
};

/** A new user of a customer, or null when the customer already has one of this email. */
export async function insertUser(
  q: Q,
  user: { id: string; customerId: string; email: string; role: PortalRole },
): Promise<UserRow | null> {
  const rows = await q.query<UserRow>(
    `INSERT INTO portal_users (id, customer_id, email, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (customer_id, email) DO NOTHING RETURNING ${USER_COLUMNS}`,
    [user.id, user.customerId, user.email, user.role],
  );
  return rows[0] ?? null;
}

/** Sets (a hash) or clears (null) the user's password. */
export async function setPassword(q: Q, userId: string, hash: string | null): Promise<UserRow | null> {
  const rows = await q.query<UserRow>(
    `UPDATE portal_users SET password_hash = $2, password_set_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END
      WHERE id = $1 RETURNING ${USER_COLUMNS}`,
    [userId, hash],
  );
  return rows[0] ?? null;
}

export async function setRole(q: Q, userId: string, role: PortalRole): Promise<void> {
  await q.query('UPDATE portal_users SET role = $2 WHERE id = $1', [userId, role]);
}

/** Disabled from now (an already disabled user keeps their time). */
export async function markDisabled(q: Q, userId: string): Promise<UserRow | null> {
  const rows = await q.query<UserRow>(
    `UPDATE portal_users SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1 RETURNING ${USER_COLUMNS}`,
    [userId],
  );
  return rows[0] ?? null;
}

export async function markEnabled(q: Q, userId: string): Promise<void> {
  await q.query('UPDATE portal_users SET disabled_at = NULL WHERE id = $1', [userId]);
}

/** The Team page's "last login" (migration 034). */
export async function setLastLogin(q: Q, userId: string, at: Date): Promise<void> {
  await q.query('UPDATE portal_users SET last_login_at = $2 WHERE id = $1', [userId, at.toISOString()]);
}
