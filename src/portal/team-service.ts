// The customer's own team (issue #27, part 2; roles, decision 0073): owners and administrators
// list their portal users, invite (by mail when SMTP is set), change roles, disable and enable
// them, an administrator never an owner; every user changes their own password. Invitations are the operator's
// mechanism (user-service: create, a new link through resetPassword), here under the customer.
// The customer always keeps an active owner, and an owner never changes or disables themself.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError, errors } from '../shared/errors.js';
import type { Mailer } from './mailer.js';
import { hashPassword, passwordProblem } from './password.js';
import { endUserSessions } from './portal-session-store.js';
import { markEnabled, setPassword, setRole } from './portal-user-store.js';
import { mayManageRole, mayWrite, roleName } from './roles.js';
import { disableUser, portalErrors, type PortalRole, type PortalUser, type UserService } from './user-service.js';

export type TeamMember = PortalUser & { lastLoginAt: string | null };

export const teamErrors = {
  self: (what: string) =>
    new AppError(409, 'conflict', {
      message: `You cannot ${what} yourself: another owner of your account can. (This keeps you from locking yourself out.)`,
    }),
  ownersOnly: () =>
    new AppError(403, 'forbidden', {
      message: 'Only an owner makes someone an owner or changes, disables or re-invites an owner.',
    }),
  notYours: () =>
    new AppError(403, 'forbidden', { message: 'Your role no longer manages the team (it changed meanwhile).' }),
  lastOwner: () =>
    new AppError(409, 'conflict', {
      message: 'Your account must keep at least one active owner: make another user an owner first.',
    }),
};

type TeamDeps = { db: Db; users: UserService; mailer: Mailer | null; log: Pick<Logger, 'warn'> };

/** The one acting on the Team page: their id and role. */
export type Actor = { id: string; role: PortalRole };

/** An invitation as the Team page shows it: `mailed` when it went by email (SMTP set, sent), else the link is shown. */
export type TeamInvitation = TeamMember & { invitationUrl: string; expiresAt: string; mailed: boolean };

function invitationText(inv: { invitationUrl: string; expiresAt: string; role: PortalRole }, by: string): string {
  return [
    `${by} invited you to the ChatGate portal as ${roleName(inv.role)}.`,
    '',
    `Set your password here (the link works once, until ${inv.expiresAt.slice(0, 16).replace('T', ' ')} UTC):`,
    inv.invitationUrl,
    '',
    'If you did not expect this, ignore this mail: nothing happens without the link.',
  ].join('\n');
}

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

/** Refuses an administrator's change to an owner, or the making of one (roles.ts mayManageRole). */
function checkManages(actor: Actor, ...roles: PortalRole[]): void {
  if (!roles.every((r) => mayManageRole(actor.role, r))) throw teamErrors.ownersOnly();
}

/**
 * The actor as the database has them under the team lock: a role changed (or a user disabled) by
 * a change that won the lock counts, so two changes at once cannot sidestep the rights.
 */
async function actorNow(tx: Pick<Db, 'query'>, customerId: string, actor: Actor): Promise<Actor> {
  const rows = await tx.query<{ role: PortalRole }>(
    'SELECT role FROM portal_users WHERE id = $1 AND customer_id = $2 AND disabled_at IS NULL',
    [actor.id, customerId],
  );
  const role = rows[0]?.role;
  if (!role || !mayWrite(role, 'team')) throw teamErrors.notYours();
  return { id: actor.id, role };
}

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

type Invited = PortalUser & { invitationUrl: string; expiresAt: string };

/** Mails the link when SMTP is set; a failed send is logged and the link shown instead. */
async function mailInvitation({ mailer, log }: TeamDeps, inv: Invited, by: string): Promise<TeamInvitation> {
  const member: TeamMember = { ...inv, lastLoginAt: null };
  const shown = { ...member, invitationUrl: inv.invitationUrl, expiresAt: inv.expiresAt };
  if (!mailer) return { ...shown, mailed: false };
  const mailed = await mailer
    .send({ to: inv.email, subject: 'Your invitation to the ChatGate portal', text: invitationText(inv, by) })
    .then(() => true)
    .catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'portal: invitation mail not sent');
      return false;
    });
  return { ...shown, mailed };
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

    /**
     * A new user and their one-time invitation link: the operator's invitation, by an owner or an
     * administrator (not of an owner), mailed to them when SMTP is set (`by` names the sender).
     */
    async invite(customerId: string, actor: Actor, input: { email: string; role: PortalRole }, by: string) {
      checkManages(actor, input.role);
      return mailInvitation(deps, await users.create(customerId, input), by);
    },

    /** A new link for a user who has not accepted theirs yet (the old link stops working), mailed as an invitation. */
    async reinvite(customerId: string, actor: Actor, userId: string, by: string) {
      const member = await this.get(customerId, userId);
      checkManages(actor, member.role);
      if (member.status !== 'invited')
        throw new AppError(409, 'conflict', { message: `${member.email} has already set a password.` });
      return mailInvitation(deps, await users.resetPassword(userId), by);
    },

    /** Changes another user's role; the customer keeps an active owner. Returns the member before and after. */
    async changeRole(customerId: string, actor: Actor, userId: string, role: PortalRole) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        if (userId === actor.id) throw teamErrors.self('change the role of');
        checkManages(await actorNow(tx, customerId, actor), before.role, role);
        if (before.role === 'owner' && role !== 'owner') await keepAnOwner(tx, customerId, userId);
        await setRole(tx, userId, role);
        return { before: toMember(customerId, before), after: toMember(customerId, { ...before, role }) };
      });
    },

    /** Disables another user: their sessions end at once; the customer keeps an active owner. */
    async disable(customerId: string, actor: Actor, userId: string) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        if (userId === actor.id) throw teamErrors.self('disable');
        checkManages(await actorNow(tx, customerId, actor), before.role);
        if (before.role === 'owner') await keepAnOwner(tx, customerId, userId);
        await disableUser(tx, userId);
        const member = toMember(customerId, { ...before, disabled_at: before.disabled_at ?? new Date() });
        return { member, changed: before.disabled_at === null };
      });
    },

    /** Lets a disabled user log in again (one who never set a password needs a new link). */
    async enable(customerId: string, actor: Actor, userId: string) {
      return db.transaction(async (tx) => {
        const before = await lockedMember(tx, customerId, userId);
        checkManages(await actorNow(tx, customerId, actor), before.role);
        await markEnabled(tx, userId);
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
        await setPassword(tx, userId, hash);
        await endUserSessions(tx, userId, sha256Hex(input.keepSession));
      });
    },
  };
}
