// Portal users: created by the operator for one customer, activated through a one-time
// invitation link, logged in with email and password (throttled per account and per address).
import crypto from 'node:crypto';

import type { Db } from '../db/db.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError, errors, operatorErrors } from '../shared/errors.js';
import { hashPassword, passwordProblem, verifyPassword } from './password.js';

export const PORTAL_ROLES = ['owner', 'viewer'] as const;
export type PortalRole = (typeof PORTAL_ROLES)[number];

export type PortalUser = {
  id: string;
  customerId: string;
  email: string;
  role: PortalRole;
  status: 'invited' | 'active' | 'disabled';
  createdAt: string;
};

type Failures = { n: number; oldest: Date | null };

/** The login throttle's window: failures older than this no longer count. */
export const LOGIN_WINDOW_MINUTES = 15;

export const portalErrors = {
  invalidLogin: () => new AppError(401, 'invalid_login', { message: 'Wrong email or password.' }),
  throttled: (minutes: number) =>
    new AppError(429, 'login_throttled', {
      message: `Too many failed logins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    }),
  invitationInvalid: () =>
    new AppError(404, 'invitation_invalid', {
      message: 'This invitation link is unknown, used or expired. Ask your operator for a new one.',
    }),
  weakPassword: (problem: string) =>
    new AppError(400, 'validation_error', { details: [{ path: 'password', message: problem }] }),
};

type Row = Record<string, unknown>;
const COLUMNS = 'id, customer_id, email, role, password_hash, disabled_at, created_at';

function toUser(r: Row): PortalUser {
  return {
    id: r.id as string,
    customerId: r.customer_id as string,
    email: r.email as string,
    role: r.role as PortalRole,
    status: r.disabled_at ? 'disabled' : r.password_hash ? 'active' : 'invited',
    createdAt: (r.created_at as Date).toISOString(),
  };
}

export type UserService = ReturnType<typeof createUserService>;

export function createUserService(deps: {
  db: Db;
  publicBaseUrl: string;
  invitationHours: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
}) {
  const { db } = deps;

  async function issueInvitation(q: Pick<Db, 'query'>, userId: string) {
    const token = crypto.randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + deps.invitationHours * 3600_000);
    await q.query('UPDATE portal_invitations SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [userId]);
    await q.query('INSERT INTO portal_invitations (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
      sha256Hex(token),
      userId,
      expiresAt.toISOString(),
    ]);
    return { invitationUrl: `${deps.publicBaseUrl}/portal/invitation/${token}`, expiresAt: expiresAt.toISOString() };
  }

  /**
   * Records one login attempt under each subject before anything else, then counts each subject's
   * attempts within the window (its own included): attempts are counted in the order they were
   * recorded, so however many arrive at once, at most the limit get as far as the password check.
   * Returns the time of the attempt's own rows (to take them back after a success).
   */
  async function recordAttempt(subjects: string[]): Promise<{ at: Date; counts: Map<string, Failures> }> {
    const [own] = await db.query<{ at: Date }>(
      `INSERT INTO portal_login_failures (subject) SELECT unnest($1::text[]) RETURNING at`,
      [subjects],
    );
    const rows = await db.query<{ subject: string; n: number; oldest: Date | null }>(
      `SELECT subject, count(*)::int AS n, min(at) AS oldest FROM portal_login_failures
        WHERE subject = ANY($1::text[]) AND at > now() - make_interval(mins => $2)
        GROUP BY subject`,
      [subjects, LOGIN_WINDOW_MINUTES],
    );
    return { at: own!.at, counts: new Map(rows.map((r) => [r.subject, { n: Number(r.n), oldest: r.oldest }])) };
  }

  function minutesLeft(oldest: Date | null): number {
    if (!oldest) return LOGIN_WINDOW_MINUTES;
    return Math.max(1, Math.ceil((oldest.getTime() + LOGIN_WINDOW_MINUTES * 60_000 - Date.now()) / 60_000));
  }

  async function get(userId: string): Promise<PortalUser> {
    const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM portal_users WHERE id = $1`, [userId]);
    if (!rows[0]) throw errors.notFound('portal user');
    return toUser(rows[0]);
  }

  /** The user an unused, unexpired invitation token belongs to. */
  async function invitation(token: string): Promise<PortalUser> {
    const rows = await db.query<Row>(
      `SELECT u.id, u.customer_id, u.email, u.role, u.password_hash, u.disabled_at, u.created_at
         FROM portal_invitations i JOIN portal_users u ON u.id = i.user_id
        WHERE i.token_hash = $1 AND i.used_at IS NULL AND i.expires_at > now() AND u.disabled_at IS NULL`,
      [sha256Hex(token)],
    );
    if (!rows[0]) throw portalErrors.invitationInvalid();
    return toUser(rows[0]);
  }

  /**
   * Email and password → the user. Every attempt is recorded before the password is checked
   * (recordAttempt), under three subjects: the account from this address (the limit), this address
   * for any account (4 × the limit), and the account from any address (10 × the limit: a ceiling
   * on guessing from many addresses). One address that fails too often is refused for every account,
   * but it cannot lock an account for its user logging in from elsewhere (until 10 × the limit).
   * Past a limit within the window, even a right password is refused until the window slides.
   * A success takes back its own attempt and clears the account's failures.
   */
  async function login(emailRaw: string, password: string, address: string): Promise<PortalUser> {
    const email = emailRaw.trim().toLowerCase().slice(0, 320);
    const limits: [string, number][] = [
      [`pair:${email}|${address}`, deps.maxFailuresPerAccount],
      [`ip:${address}`, deps.maxFailuresPerAddress],
      [`email:${email}`, deps.maxFailuresPerAccount * 10],
    ];
    const attempt = await recordAttempt(limits.map(([subject]) => subject));
    for (const [subject, limit] of limits) {
      const c = attempt.counts.get(subject) ?? { n: 0, oldest: null };
      if (c.n > limit) throw portalErrors.throttled(minutesLeft(c.oldest));
    }
    const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM portal_users WHERE email = $1`, [email]);
    const row = rows[0];
    const ok = await verifyPassword(password, (row?.password_hash as string | null | undefined) ?? null);
    if (!row || !ok || row.disabled_at) throw portalErrors.invalidLogin();
    await db.query(
      `DELETE FROM portal_login_failures
        WHERE subject = ANY($1::text[]) OR (subject = $2 AND at = $3) OR at < now() - make_interval(mins => $4)`,
      [[`pair:${email}|${address}`, `email:${email}`], `ip:${address}`, attempt.at, LOGIN_WINDOW_MINUTES],
    );
    return toUser(row);
  }

  return {
    get,
    invitation,
    login,

    /** Operator: a new user of a customer and their invitation link (shown once). */
    async create(customerId: string, input: { email: string; role: PortalRole }) {
      return db.transaction(async (tx) => {
        const c = await tx.query('SELECT 1 FROM customers WHERE id = $1', [customerId]);
        if (c.length === 0) throw errors.notFound('customer');
        const email = input.email.trim().toLowerCase();
        const rows = await tx.query<Row>(
          `INSERT INTO portal_users (id, customer_id, email, role) VALUES ($1, $2, $3, $4)
           ON CONFLICT (email) DO NOTHING RETURNING ${COLUMNS}`,
          [crypto.randomUUID(), customerId, email, input.role],
        );
        if (!rows[0]) throw operatorErrors.alreadyExists('a portal user with this email');
        const user = toUser(rows[0]);
        return { ...user, ...(await issueInvitation(tx, user.id)) };
      });
    },

    async list(customerId: string): Promise<PortalUser[]> {
      const rows = await db.query<Row>(
        `SELECT ${COLUMNS} FROM portal_users WHERE customer_id = $1 ORDER BY created_at, id`,
        [customerId],
      );
      return rows.map(toUser);
    },

    /** Operator: a new invitation link; the old password stops working and every session ends. */
    async resetPassword(userId: string) {
      return db.transaction(async (tx) => {
        const rows = await tx.query<Row>(
          `UPDATE portal_users SET password_hash = NULL, password_set_at = NULL WHERE id = $1 RETURNING ${COLUMNS}`,
          [userId],
        );
        if (!rows[0]) throw errors.notFound('portal user');
        await tx.query('DELETE FROM portal_sessions WHERE user_id = $1', [userId]);
        return { ...toUser(rows[0]), ...(await issueInvitation(tx, userId)) };
      });
    },

    /** Operator: the user can no longer log in; their sessions end at once. */
    async disable(userId: string): Promise<PortalUser> {
      return db.transaction(async (tx) => {
        const rows = await tx.query<Row>(
          `UPDATE portal_users SET disabled_at = COALESCE(disabled_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
          [userId],
        );
        if (!rows[0]) throw errors.notFound('portal user');
        await tx.query('DELETE FROM portal_sessions WHERE user_id = $1', [userId]);
        await tx.query('UPDATE portal_invitations SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [
          userId,
        ]);
        return toUser(rows[0]);
      });
    },

    /** Sets the password from an invitation; the token is spent in the same transaction. */
    async acceptInvitation(token: string, password: string): Promise<PortalUser> {
      const user = await invitation(token);
      const problem = passwordProblem(password, user.email);
      if (problem) throw portalErrors.weakPassword(problem);
      const hash = await hashPassword(password);
      return db.transaction(async (tx) => {
        const spent = await tx.query(
          `UPDATE portal_invitations SET used_at = now()
            WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id`,
          [sha256Hex(token)],
        );
        if (spent.length === 0) throw portalErrors.invitationInvalid();
        const rows = await tx.query<Row>(
          `UPDATE portal_users SET password_hash = $2, password_set_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
          [user.id, hash],
        );
        await tx.query('DELETE FROM portal_sessions WHERE user_id = $1', [user.id]);
        return toUser(rows[0]!);
      });
    },

    /** Re-checks the password of a logged-in user (revealing a key). Counts as a failed login. */
    async confirmPassword(userId: string, password: string, address: string): Promise<void> {
      const user = await get(userId);
      await login(user.email, password, address);
    },
  };
}
