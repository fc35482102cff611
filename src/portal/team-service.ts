// The customer's own team (issue #27, part 2): owners list their portal users, change roles,
// disable and enable them; every user changes their own password. Invitations are the operator's
// mechanism (user-service: create, a new link through resetPassword), here under the customer.
// The customer always keeps an active owner, and an owner never changes or disables themself.
import type { Db } from '../db/db.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError, errors } from '../shared/errors.js';
import { hashPassword, passwordProblem } from './password.js';
import { disableUser, portalErrors, type PortalRole, type PortalUser, type UserService } from './user-service.js';

export type TeamMember = PortalUser & { lastLoginAt: string | null };

export const teamErrors = {
  self: (what: string) =>
    new AppError(409, 'conflict', {
      message: `You cannot ${what} yourself: another owner of your account can. (This keeps you from locking yourself out.)`,
    }),
  lastOwner: () =>
    new AppError(409, 'conflict', {
      message: 'Your account must keep at least one active owner: make another user an owner first.',
    }),
};

type TeamDeps = { db: Db; users: UserService };

type MemberRow = {
  id: string;
  email: string;
  role: PortalRole;
  password_hash: string | null;
  disabled_at: Date | null;
  created_at: Date;
  last_login_at: Date | null;
};

const MEMBER_COLUMNS = 'id, email, role, password_hash, disabled_at, created_at, last_login_at';

function toMember(customerId: string, r: MemberRow): TeamMember {
  return {
    id: r.id,
    customerId,
    email: r.email,
    role: r.role,
    status: r.disabled_at ? 'disabled' : r.password_hash ? 'active' : 'invited',
    createdAt: r.created_at.toISOString(),
    lastLoginAt: r.last_login_at ? r.last_login_at.toISOString() : null,
  };
}

/**
 * Inside a transaction: takes the customer's team lock (its customers row, FOR NO KEY UPDATE: it
 * does not block inserts that reference the customer), then reads the member. Two owners demoting
 * or disabling each other at once are serialized, so the second sees the first's change and the
 * customer keeps an active owner. Another customer's user is not found.
 */
async function lockedMember(tx: Pick<Db, 'query'>, customerId: string, userId: string): Promise<MemberRow> {
  await tx.query('SELECT 1 FROM customers WHERE id = $1 FOR NO KEY UPDATE', [customerId]);
  const rows = await tx.query<MemberRow>(
    `SELECT ${MEMBER_COLUMNS} FROM portal_users WHERE id = $1 AND customer_id = $2`,
    [userId, customerId],
  );
  if (!rows[0]) throw errors.notFound('portal user');
  return rows[0];
}

/** Refuses when `userId` is the customer's only active owner (an owner with a password, not disabled). */
async function keepAnOwner(tx: Pick<Db, 'query'>, customerId: string, userId: string): Promise<void> {
  const rows = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM portal_users
      WHERE customer_id = $1 AND id <> $2 AND role = 'owner' AND disabled_at IS NULL AND password_hash IS NOT NULL`,
    [customerId, userId],
  );
  if (Number(rows[0]?.n ?? 0) === 0) throw teamErrors.lastOwner();
}

export type TeamService = ReturnType<typeof createTeamService>;

export function createTeamService(deps: TeamDeps) {
  const { db, users } = deps;
  return {
    /** The customer's users, oldest first, with when each last logged in. */
    async list(customerId: string): Promise<TeamMember[]> {
      const rows = await db.query<MemberRow>(
        `SELECT ${MEMBER_COLUMNS} FROM portal_users WHERE customer_id = $1 ORDER BY created_at, id`,
        [customerId],
      );
      return rows.map((r) => toMember(customerId, r));
    },

    async get(customerId: string, userId: string): Promise<TeamMember> {
      const rows = await db.query<MemberRow>(
        `SELECT ${MEMBER_COLUMNS} FROM portal_users WHERE id = $1 AND customer_id = $2`,
        [userId, customerId],
      );
      if (!rows[0]) throw errors.notFound('portal user');
      return toMember(customerId, rows[0]);
    },

    /** A new user and their one-time invitation link: the operator's invitation, by an owner. */
    invite: (customerId: string, input: { email: string; role: PortalRole }) => users.create(customerId, input),

    /** A new link for a user who has not accepted theirs yet (the old link stops working). */
    async reinvite(customerId: string, userId: string) {
      const member = await this.get(customerId, userId);
      if (member.status !== 'invited')
        throw new AppError(409, 'conflict', { message: `${member.email} has already set a password.` });
      return users.resetPassword(userId);
    },

    /** Changes another user's role; the customer keeps an active owner. Returns the member before and after. */
    async changeRole(customerId: string, actorId: string, userId: string, role: PortalRole) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        if (userId === actorId) throw teamErrors.self('change the role of');
        if (before.role === 'owner' && role !== 'owner') await keepAnOwner(tx, customerId, userId);
        await tx.query('UPDATE portal_users SET role = $2 WHERE id = $1', [userId, role]);
        return { before: toMember(customerId, before), after: toMember(customerId, { ...before, role }) };
      });
    },

    /** Disables another user: their sessions end at once; the customer keeps an active owner. */
    async disable(customerId: string, actorId: string, userId: string) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        if (userId === actorId) throw teamErrors.self('disable');
        if (before.role === 'owner') await keepAnOwner(tx, customerId, userId);
        await disableUser(tx, userId);
        const member = toMember(customerId, { ...before, disabled_at: before.disabled_at ?? new Date() });
        return { member, changed: before.disabled_at === null };
      });
    },

    /** Lets a disabled user log in again (one who never set a password needs a new link). */
    async enable(customerId: string, userId: string) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        await tx.query('UPDATE portal_users SET disabled_at = NULL WHERE id = $1', [userId]);
        return { member: toMember(customerId, { ...before, disabled_at: null }), changed: before.disabled_at !== null };
      });
    },

    /**
     * A user changes their own password: the current one re-checked (throttled like every
     * re-check, confirmPassword), the new one under the same rules as an invitation's, and every
     * other session of the user ended (the cookie value `keepSession`, the one in use, stays).
     */
    async changePassword(
      userId: string,
      input: { current: string; next: string; address: string; keepSession: string },
    ): Promise<void> {
      const user = await users.get(userId);
      await users.confirmPassword(userId, input.current, input.address);
      const problem = passwordProblem(input.next, user.email);
      if (problem) throw portalErrors.weakPassword(problem);
      const hash = await hashPassword(input.next);
      await db.transaction(async (tx) => {
        await tx.query('UPDATE portal_users SET password_hash = $2, password_set_at = now() WHERE id = $1', [
          userId,
          hash,
        ]);
        await tx.query('DELETE FROM portal_sessions WHERE user_id = $1 AND id_hash <> $2', [
          userId,
          sha256Hex(input.keepSession),
        ]);
      });
    },
  };
}
