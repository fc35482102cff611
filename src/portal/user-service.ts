// Portal users: created by the operator for one customer, activated through a one-time
// invitation link, logged in with email and password (throttled per account and per address).
// Its writes go through the tables' stores (portal-user-store.ts, invitation-store.ts, …).
import crypto from 'node:crypto';

import type { Db } from '../db/db.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError, errors, operatorErrors } from '../shared/errors.js';
import { insertInvitation, spendInvitation, spendOpenInvitations } from './invitation-store.js';
import { clearAttempts, purgeAttempts, recordAttempt } from './login-throttle-store.js';
import { hashPassword, passwordProblem, verifyPassword } from './password.js';
import { endUserSessions } from './portal-session-store.js';
import { insertUser, markDisabled, setPassword, USER_COLUMNS, type UserRow } from './portal-user-store.js';
import type { PortalRole } from './roles.js';
import { removeTwoFactor } from './two-factor-store.js';

export { PORTAL_ROLES, type PortalRole } from './roles.js';

export type PortalUser = {
  id: string;
  customerId: string;
  email: string;
  role: PortalRole;
  status: 'invited' | 'active' | 'disabled';
  createdAt: string;
};

/** A throttle subject and its limit within the window: attempts, or distinct addresses. */
export type Subject = { subject: string; limit: number; distinct?: boolean };

/**
 * The accounts one address can sign in to (at different customers, decision 0056): a bound on the
 * password hashes one login attempt computes.
 */
export const MAX_ACCOUNTS_PER_EMAIL = 10;

/** The login throttle's window: failures older than this no longer count. */
export const LOGIN_WINDOW_MINUTES = 15;

export const portalErrors = {
  invalidLogin: () => new AppError(401, 'invalid_login', { message: 'Wrong email or password.' }),
  wrongPassword: () => new AppError(401, 'invalid_login', { message: 'Wrong password.' }),
  throttled: (minutes: number, what = 'failed logins') =>
    new AppError(429, 'login_throttled', {
      message: `Too many ${what}. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    }),
  invitationInvalid: () =>
    new AppError(404, 'invitation_invalid', {
      message: 'This invitation link is unknown, used or expired. Ask your operator for a new one.',
    }),
  weakPassword: (problem: string) =>
    new AppError(400, 'validation_error', { details: [{ path: 'password', message: problem }] }),
};

const COLUMNS = USER_COLUMNS;
type Row = UserRow;

function toUser(r: Row): PortalUser {
  return {
    id: r.id,
    customerId: r.customer_id,
    email: r.email,
    role: r.role,
    status: r.disabled_at ? 'disabled' : r.password_hash ? 'active' : 'invited',
    createdAt: r.created_at.toISOString(),
  };
}

export type UserService = ReturnType<typeof createUserService>;

type UserDeps = {
  db: Db;
  publicBaseUrl: string;
  invitationHours: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
};

async function issueInvitation(deps: UserDeps, q: Pick<Db, 'query'>, userId: string) {
  const token = crypto.randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + deps.invitationHours * 3600_000);
  await spendOpenInvitations(q, userId);
  await insertInvitation(q, sha256Hex(token), userId, expiresAt);
  return { invitationUrl: `${deps.publicBaseUrl}/portal/invitation/${token}`, expiresAt: expiresAt.toISOString() };
}

/**
 * Records one attempt under each subject before anything else (each row with the client's address
 * and the attempt's id), then counts each subject within the window, its own rows included: rows
 * are counted in the order they were recorded, so however many arrive at once, at most the limit
 * get as far as the password check. A subject counts attempts, or with `distinct` the distinct
 * addresses it was tried from. An attempt refused here takes its rows back at once: refused
 * attempts record nothing, so hammering a refused subject never extends or widens a lock.
 * Returns the attempt's id (to take its rows back after a success).
 */
export async function throttle(db: Db, subjects: Subject[], address: string, what?: string): Promise<string> {
  const attempt = crypto.randomUUID();
  await recordAttempt(
    db,
    subjects.map((x) => x.subject),
    address,
    attempt,
  );
  const rows = await db.query<{ subject: string; n: number; addresses: number; oldest: Date | null }>(
    `SELECT subject, count(*)::int AS n, count(DISTINCT address)::int AS addresses, min(at) AS oldest
       FROM portal_login_failures
      WHERE subject = ANY($1::text[]) AND at > now() - make_interval(mins => $2)
      GROUP BY subject`,
    [subjects.map((x) => x.subject), LOGIN_WINDOW_MINUTES],
  );
  const counts = new Map(rows.map((r) => [r.subject, r]));
  for (const { subject, limit, distinct } of subjects) {
    const c = counts.get(subject);
    if (c && Number(distinct ? c.addresses : c.n) > limit) {
      await takeBack(db, attempt);
      throw portalErrors.throttled(minutesLeft(c.oldest), what);
    }
  }
  return attempt;
}

export async function takeBack(db: Db, attempt: string): Promise<void> {
  await clearAttempts(db, attempt);
}

function minutesLeft(oldest: Date | null): number {
  if (!oldest) return LOGIN_WINDOW_MINUTES;
  return Math.max(1, Math.ceil((oldest.getTime() + LOGIN_WINDOW_MINUTES * 60_000 - Date.now()) / 60_000));
}

async function getUser(db: Db, userId: string): Promise<PortalUser> {
  const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM portal_users WHERE id = $1`, [userId]);
  if (!rows[0]) throw errors.notFound('portal user');
  return toUser(rows[0]);
}

/** The user an unused, unexpired invitation token belongs to. */
async function invitationUser(db: Db, token: string): Promise<PortalUser> {
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
 * (throttle), under three subjects: the account from this address (the limit), this address for
 * any account (4 × the limit), and the account from any address, counted over distinct addresses
 * (10 × the limit addresses: a ceiling on guessing from many addresses). An attempt that is
 * refused is not counted, so one address can never reach the account-wide ceiling alone: it is
 * stopped at the limit and counts as one address. Past a limit within the window, even a right
 * password is refused until the window slides. A success takes back its own attempt and clears
 * the account's failures.
 *
 * An address may have an account at several customers (decision 0056): every account of it with
 * a password is checked, all at once (so two cost about the time of one), and the password picks
 * the account; one that fits several signs in to the one used last.
 */
async function login(deps: UserDeps, emailRaw: string, password: string, address: string): Promise<PortalUser> {
  const { db } = deps;
  const email = emailRaw.trim().toLowerCase().slice(0, 320);
  const attempt = await throttle(
    db,
    [
      { subject: `pair:${email}|${address}`, limit: deps.maxFailuresPerAccount },
      { subject: `ip:${address}`, limit: deps.maxFailuresPerAddress },
      { subject: `email:${email}`, limit: deps.maxFailuresPerAccount * 10, distinct: true },
    ],
    address,
  );
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM portal_users WHERE email = $1 AND password_hash IS NOT NULL
      ORDER BY last_login_at DESC NULLS LAST, created_at, id LIMIT $2`,
    [email, MAX_ACCOUNTS_PER_EMAIL],
  );
  // Without an account a hash is still computed (verifyPassword), so an unknown address costs the same.
  const checked = await Promise.all(
    rows.length > 0 ? rows.map((r) => verifyPassword(password, r.password_hash)) : [verifyPassword(password, null)],
  );
  const row = rows.find((r, i) => checked[i] && !r.disabled_at);
  if (!row) throw portalErrors.invalidLogin();
  await clearAttempts(db, attempt, [`pair:${email}|${address}`, `email:${email}`]);
  return toUser(row);
}

/** Sets the password from an invitation; the token is spent in the same transaction. */
async function acceptInvitation(db: Db, token: string, password: string): Promise<PortalUser> {
  const user = await invitationUser(db, token);
  const problem = passwordProblem(password, user.email);
  if (problem) throw portalErrors.weakPassword(problem);
  const hash = await hashPassword(password);
  return db.transaction(async (tx) => {
    if (!(await spendInvitation(tx, sha256Hex(token)))) throw portalErrors.invitationInvalid();
    const row = await setPassword(tx, user.id, hash);
    await endUserSessions(tx, user.id);
    return toUser(row!);
  });
}

/**
 * Disables a user inside the caller's transaction (the operator's disable, an owner's on the Team
 * page): they can no longer log in, their sessions end at once and an open invitation is spent.
 */
export async function disableUser(tx: Pick<Db, 'query'>, userId: string): Promise<PortalUser> {
  const row = await markDisabled(tx, userId);
  if (!row) throw errors.notFound('portal user');
  await endUserSessions(tx, userId);
  await spendOpenInvitations(tx, userId);
  return toUser(row);
}

export function createUserService(deps: UserDeps) {
  const { db } = deps;

  return {
    get: (userId: string) => getUser(db, userId),
    invitation: (token: string) => invitationUser(db, token),
    login: (email: string, password: string, address: string) => login(deps, email, password, address),
    acceptInvitation: (token: string, password: string) => acceptInvitation(db, token, password),

    /**
     * A new user of a customer and their invitation link (shown once): the operator's, and an
     * owner's on the Team page. An address may be a user at several customers, each a separate
     * account with its own password (decision 0056).
     */
    async create(customerId: string, input: { email: string; role: PortalRole }) {
      return db.transaction(async (tx) => {
        const c = await tx.query('SELECT 1 FROM customers WHERE id = $1', [customerId]);
        if (c.length === 0) throw errors.notFound('customer');
        const email = input.email.trim().toLowerCase();
        const row = await insertUser(tx, { id: crypto.randomUUID(), customerId, email, role: input.role });
        // Only this customer's own users conflict: another customer's user of the address is not
        // looked at, so the answer tells nothing about them (decision 0056).
        if (!row) throw operatorErrors.alreadyExists('a portal user with this email at this customer');
        const user = toUser(row);
        return { ...user, ...(await issueInvitation(deps, tx, user.id)) };
      });
    },

    async list(customerId: string): Promise<PortalUser[]> {
      const rows = await db.query<Row>(
        `SELECT ${COLUMNS} FROM portal_users WHERE customer_id = $1 ORDER BY created_at, id`,
        [customerId],
      );
      return rows.map(toUser);
    },

    /** Operator: a new invitation link; the old password, every session and two-factor sign-in end. */
    async resetPassword(userId: string) {
      return db.transaction(async (tx) => {
        const row = await setPassword(tx, userId, null);
        if (!row) throw errors.notFound('portal user');
        await endUserSessions(tx, userId);
        // The way back for a user who lost their phone and recovery codes: two-factor goes too (0051).
        await removeTwoFactor(tx, userId);
        return { ...toUser(row), ...(await issueInvitation(deps, tx, userId)) };
      });
    },

    /** Operator: the user can no longer log in; their sessions end at once. */
    async disable(userId: string): Promise<PortalUser> {
      return db.transaction((tx) => disableUser(tx, userId));
    },

    /**
     * Re-checks the password of a logged-in user (reveal a key, create one, change a webhook URL).
     * Throttled on its own subject, per user (the login limit of failures in the window), apart
     * from the login throttle: failed re-checks never keep the user from logging in.
     */
    async confirmPassword(userId: string, password: string, address: string): Promise<void> {
      const rows = await db.query<Row>(`SELECT ${COLUMNS} FROM portal_users WHERE id = $1`, [userId]);
      if (!rows[0]) throw errors.notFound();
      const subject = `recheck:${userId}`;
      const attempt = await throttle(db, [{ subject, limit: deps.maxFailuresPerAccount }], address, 'wrong passwords');
      const ok = await verifyPassword(password, rows[0].password_hash);
      if (!ok || rows[0].disabled_at) throw portalErrors.wrongPassword();
      await clearAttempts(db, attempt, [subject]);
    },
  };
}

/** The purger's pass: failures past the window count for nothing; they go on a schedule. */
export function purgeLoginFailures(db: Pick<Db, 'query'>): Promise<number> {
  return purgeAttempts(db, LOGIN_WINDOW_MINUTES);
}
