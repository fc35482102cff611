// Portal sessions, kept in the database so every process shares them. The cookie carries an
// opaque random id; only its SHA-256 is stored. A new id is issued at every login (no fixation),
// sessions end after an idle period and at an absolute limit, and "log out everywhere" ends all.
import crypto from 'node:crypto';

import type { Db } from '../db/db.js';
import { type SealedAt, type Sealer, sha256Hex } from '../shared/crypto.js';
import {
  deleteExpiredUserSessions,
  deleteSession,
  endUserSessions,
  insertSession,
  insertShownOnce,
  purgeExpired,
  takeShownOnce,
  touchSession,
} from './portal-session-store.js';
import { setLastLogin } from './portal-user-store.js';
import type { PortalRole } from './roles.js';

export type Session = {
  userId: string;
  customerId: string;
  email: string;
  role: PortalRole;
  csrfToken: string;
  expiresAt: Date;
};

/** last_seen_at is written at most this often per session (a page view costs no write). */
const TOUCH_EVERY_MS = 60_000;

/** How long a secret waits for the page that shows it once (the redirect's GET follows at once). */
const SHOWN_ONCE_MINUTES = 10;

/** A shown-once value is bound to its row (its hashed id), as every sealed value is. */
const shownOnceAt = (id: string): SealedAt => ({ table: 'portal_shown_once', column: 'value_enc', id: sha256Hex(id) });

export type SessionService = ReturnType<typeof createSessionService>;

type SessionDeps = { db: Db; sealer: Sealer; idleMinutes: number; absoluteHours: number };

/** A fresh session for a user who just proved who they are; `previous` (a presented cookie) ends. */
async function createSession(
  deps: SessionDeps,
  user: { id: string; customerId: string },
  previous: string | null,
): Promise<{ id: string }> {
  const { db } = deps;
  const id = crypto.randomBytes(32).toString('base64url');
  const now = new Date();
  await db.transaction(async (tx) => {
    if (previous) await deleteSession(tx, sha256Hex(previous));
    await deleteExpiredUserSessions(tx, user.id);
    await insertSession(tx, {
      idHash: sha256Hex(id),
      userId: user.id,
      customerId: user.customerId,
      csrfToken: crypto.randomBytes(32).toString('base64url'),
      at: now,
      expiresAt: new Date(now.getTime() + deps.absoluteHours * 3600_000),
    });
    await setLastLogin(tx, user.id, now);
  });
  return { id };
}

/** The live session of a cookie value, or null (unknown, idle too long, past its limit, user disabled). */
async function getSession(deps: SessionDeps, id: string): Promise<Session | null> {
  const { db } = deps;
  if (id.length < 20 || id.length > 100) return null;
  const rows = await db.query<{
    user_id: string;
    customer_id: string;
    csrf_token: string;
    last_seen_at: Date;
    expires_at: Date;
    email: string;
    role: PortalRole;
  }>(
    `SELECT s.user_id, s.customer_id, s.csrf_token, s.last_seen_at, s.expires_at, u.email, u.role
       FROM portal_sessions s JOIN portal_users u ON u.id = s.user_id
      WHERE s.id_hash = $1 AND u.disabled_at IS NULL AND u.password_hash IS NOT NULL
        AND s.expires_at > now() AND s.last_seen_at > now() - make_interval(mins => $2)`,
    [sha256Hex(id), deps.idleMinutes],
  );
  const r = rows[0];
  if (!r) return null;
  if (Date.now() - r.last_seen_at.getTime() > TOUCH_EVERY_MS) await touchSession(db, sha256Hex(id));
  return {
    userId: r.user_id,
    customerId: r.customer_id,
    email: r.email,
    role: r.role,
    csrfToken: r.csrf_token,
    expiresAt: r.expires_at,
  };
}

export function createSessionService(deps: SessionDeps) {
  const { db } = deps;
  return {
    create: (user: { id: string; customerId: string }, previous: string | null) => createSession(deps, user, previous),
    get: (id: string) => getSession(deps, id),

    async destroy(id: string): Promise<void> {
      await deleteSession(db, sha256Hex(id));
    },

    /**
     * Keeps a secret for the one page that shows it after a form's redirect: sealed, bound to the
     * session `sessionId`, readable once. Returns the unguessable id the redirect names (the
     * secret itself never goes into a URL).
     */
    async stash(sessionId: string, kind: string, value: string): Promise<string> {
      const id = crypto.randomBytes(24).toString('base64url');
      await insertShownOnce(db, {
        idHash: sha256Hex(id),
        sessionHash: sha256Hex(sessionId),
        kind,
        valueEnc: deps.sealer.seal(value, shownOnceAt(id)),
        minutes: SHOWN_ONCE_MINUTES,
      });
      return id;
    },

    /**
     * The stashed secret of `id` if this session made it, its kind starts with `kindPrefix` and it
     * is still there; deleted as it is read (a reload finds nothing).
     */
    async takeStashed(
      sessionId: string,
      id: string,
      kindPrefix: string,
    ): Promise<{ kind: string; value: string } | null> {
      if (id.length < 20 || id.length > 100) return null;
      const r = await takeShownOnce(db, sha256Hex(id), sha256Hex(sessionId), kindPrefix);
      if (!r || r.expires_at.getTime() < Date.now()) return null;
      return { kind: r.kind, value: deps.sealer.open(r.value_enc, shownOnceAt(id)) };
    },

    /** Log out everywhere: every session of the user, in every process, ends now. */
    async destroyAll(userId: string): Promise<void> {
      await endUserSessions(db, userId);
    },
  };
}

/**
 * The purger's sweep: sessions past their absolute expiry (their shown-once secrets go with them)
 * and shown-once secrets nobody came back for. Both are refused when read anyway; this keeps a
 * session that is never used again, and its sealed secrets, from staying in the database.
 */
export function purgeExpiredSessions(db: Pick<Db, 'query'>): Promise<number> {
  return purgeExpired(db);
}
