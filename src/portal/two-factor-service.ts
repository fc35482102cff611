// Two-factor sign-in (decision 0051): a TOTP secret per user, sealed like every stored secret;
// enrolment confirmed by a first code; ten single-use recovery codes kept as hashes; the login's
// second step bound to the first by a short-lived, single-use challenge (no session before the
// code); wrong codes throttled like wrong passwords; a code's time step never accepted twice.
import crypto from 'node:crypto';

import type { Db } from '../db/db.js';
import { type SealedAt, type Sealer, sha256Hex } from '../shared/crypto.js';
import { AppError } from '../shared/errors.js';
import {
  findHash,
  matchingStep,
  newRecoveryCodes,
  newTotpSecret,
  recoveryCodeHash,
  totpCodeOf,
  totpUri,
} from './totp.js';
import { type Subject, takeBack, throttle } from './user-service.js';

/** How long the code step of a login waits after the right password. */
export const CHALLENGE_MINUTES = 5;

export const twoFactorErrors = {
  wrongCode: () => new AppError(401, 'invalid_code', { message: 'Wrong code.' }),
  challengeGone: () =>
    new AppError(401, 'login_expired', { message: 'This sign-in has expired or was used. Log in again.' }),
  alreadyOn: () => new AppError(409, 'two_factor_on', { message: 'Two-factor sign-in is already on.' }),
  notPending: () =>
    new AppError(409, 'two_factor_not_started', { message: 'Start the set-up again: there is no code to confirm.' }),
  notOn: () => new AppError(409, 'two_factor_off', { message: 'Two-factor sign-in is not on.' }),
};

const secretAt = (userId: string): SealedAt => ({ table: 'portal_totp', column: 'secret_enc', id: userId });

type TwoFactorDeps = { db: Db; sealer: Sealer; maxFailuresPerAccount: number; maxFailuresPerAddress: number };

export type TwoFactorStatus = { enabled: boolean; pending: boolean; recoveryCodesLeft: number };
export type TwoFactorService = ReturnType<typeof createTwoFactorService>;

/**
 * Codes typed on the security page (confirm, turn off) have their own count per user, apart from
 * the login's code step, as password re-checks do (decision 0018): a signed-in user mistyping
 * never keeps themselves from logging in.
 */
const recheckSubjects = (deps: TwoFactorDeps, userId: string): Subject[] => [
  { subject: `totp-recheck:${userId}`, limit: deps.maxFailuresPerAccount },
];

type TotpRow = { secret_enc: string; enabled_at: Date | null };

async function totpRow(db: Db, userId: string): Promise<TotpRow | null> {
  const rows = await db.query<TotpRow>('SELECT secret_enc, enabled_at FROM portal_totp WHERE user_id = $1', [userId]);
  return rows[0] ?? null;
}

/**
 * A TOTP code of the user's secret: its time step must be later than the last one accepted; the
 * step is recorded in the same statement (compare-and-set), so one code works once, even twice at once.
 */
async function useTotpCode(deps: TwoFactorDeps, userId: string, row: TotpRow, code: string): Promise<boolean> {
  const step = matchingStep(deps.sealer.open(row.secret_enc, secretAt(userId)), code);
  if (step === null) return false;
  const taken = await deps.db.query(
    `UPDATE portal_totp SET last_step = $2 WHERE user_id = $1 AND (last_step IS NULL OR last_step < $2) RETURNING 1`,
    [userId, step],
  );
  return taken.length === 1;
}

/** An unused recovery code of the user, spent as it is accepted; all of them compared in constant time. */
async function useRecoveryCode(db: Db, userId: string, input: string): Promise<boolean> {
  const hash = recoveryCodeHash(input);
  if (!hash) return false;
  const rows = await db.query<{ code_hash: string }>(
    'SELECT code_hash FROM portal_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
    [userId],
  );
  const found = findHash(
    rows.map((r) => r.code_hash),
    hash,
  );
  if (!found) return false;
  const spent = await db.query(
    `UPDATE portal_recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING 1`,
    [userId, found],
  );
  return spent.length === 1;
}

/**
 * Checks a second factor of a user whose two-factor sign-in is on: a 6-digit code of the app, or a
 * recovery code. Throttled under `subjects`, counted before the check; a right code takes its
 * attempt back.
 */
async function checkCode(
  deps: TwoFactorDeps,
  userId: string,
  input: string,
  address: string,
  subjects: Subject[],
): Promise<'totp' | 'recovery'> {
  const attempt = await throttle(deps.db, subjects, address, 'wrong codes');
  const row = await totpRow(deps.db, userId);
  if (!row?.enabled_at) throw twoFactorErrors.notOn();
  const code = totpCodeOf(input.slice(0, 40));
  const kind = code ? 'totp' : 'recovery';
  const ok = code
    ? await useTotpCode(deps, userId, row, code)
    : await useRecoveryCode(deps.db, userId, input.slice(0, 40));
  if (!ok) throw twoFactorErrors.wrongCode();
  await takeBack(deps.db, attempt);
  return kind;
}

/** Writes a user's new recovery codes in place of all the old ones; refused when two-factor sign-in is off. */
async function replaceRecoveryCodes(db: Db, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db.transaction(async (tx) => {
    const on = await tx.query('SELECT 1 FROM portal_totp WHERE user_id = $1 AND enabled_at IS NOT NULL FOR UPDATE', [
      userId,
    ]);
    if (on.length === 0) throw twoFactorErrors.notOn();
    await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
    await tx.query('INSERT INTO portal_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [
      userId,
      codes.map((c) => recoveryCodeHash(c)!),
    ]);
  });
  return codes;
}

/** After the right password: the id of the login's second step (only its hash is stored). */
async function startChallenge(db: Db, userId: string): Promise<string> {
  const id = crypto.randomBytes(32).toString('base64url');
  await db.query('DELETE FROM portal_login_challenges WHERE user_id = $1 AND expires_at < now()', [userId]);
  await db.query(
    `INSERT INTO portal_login_challenges (id_hash, user_id, expires_at)
     VALUES ($1, $2, now() + make_interval(mins => $3))`,
    [sha256Hex(id), userId, CHALLENGE_MINUTES],
  );
  return id;
}

/** The user a live challenge belongs to, or null. */
async function challengeUser(db: Db, id: string): Promise<string | null> {
  if (id.length < 20 || id.length > 100) return null;
  const rows = await db.query<{ user_id: string }>(
    'SELECT user_id FROM portal_login_challenges WHERE id_hash = $1 AND expires_at > now()',
    [sha256Hex(id)],
  );
  return rows[0]?.user_id ?? null;
}

/**
 * The second step: a right code ends the challenge (once: a second use finds nothing) and names
 * the user to start a session for, and which kind of code it was.
 */
async function completeChallenge(deps: TwoFactorDeps, id: string, input: string, address: string) {
  const userId = await challengeUser(deps.db, id);
  if (!userId) throw twoFactorErrors.challengeGone();
  // The login's code step: per user (the login's limit) and per client address (the login's own
  // address subject: wrong codes and wrong passwords from one address add up).
  const kind = await checkCode(deps, userId, input, address, [
    { subject: `totp:${userId}`, limit: deps.maxFailuresPerAccount },
    { subject: `ip:${address}`, limit: deps.maxFailuresPerAddress },
  ]);
  const spent = await deps.db.query('DELETE FROM portal_login_challenges WHERE id_hash = $1 RETURNING 1', [
    sha256Hex(id),
  ]);
  if (spent.length === 0) throw twoFactorErrors.challengeGone();
  return { userId, kind };
}

export function createTwoFactorService(deps: TwoFactorDeps) {
  const { db, sealer } = deps;
  return {
    async status(userId: string): Promise<TwoFactorStatus> {
      const row = await totpRow(db, userId);
      const [left] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM portal_recovery_codes WHERE user_id = $1 AND used_at IS NULL',
        [userId],
      );
      return { enabled: !!row?.enabled_at, pending: !!row && !row.enabled_at, recoveryCodesLeft: Number(left?.n ?? 0) };
    },

    async isOn(userId: string): Promise<boolean> {
      return !!(await totpRow(db, userId))?.enabled_at;
    },

    /** A new secret waiting for its first code (replaces one that was waiting); refused when on. */
    async start(userId: string): Promise<void> {
      const sealed = sealer.seal(newTotpSecret(), secretAt(userId));
      const rows = await db.query(
        `INSERT INTO portal_totp (user_id, secret_enc) VALUES ($1, $2)
         ON CONFLICT (user_id) DO UPDATE SET secret_enc = EXCLUDED.secret_enc, last_step = NULL, created_at = now()
           WHERE portal_totp.enabled_at IS NULL
         RETURNING 1`,
        [userId, sealed],
      );
      if (rows.length === 0) throw twoFactorErrors.alreadyOn();
    },

    /** The waiting secret (base32) and its otpauth:// URI, for the set-up page; null when none waits. */
    async pending(userId: string, email: string): Promise<{ secret: string; uri: string } | null> {
      const row = await totpRow(db, userId);
      if (!row || row.enabled_at) return null;
      const secret = sealer.open(row.secret_enc, secretAt(userId));
      return { secret, uri: totpUri(secret, 'ChatGate', email) };
    },

    /**
     * Turns two-factor sign-in on with a first code of the waiting secret (throttled like the
     * other code checks); returns the ten recovery codes, kept only as hashes from here on.
     */
    async confirm(userId: string, input: string, address: string): Promise<string[]> {
      const attempt = await throttle(db, recheckSubjects(deps, userId), address, 'wrong codes');
      const row = await totpRow(db, userId);
      if (!row) throw twoFactorErrors.notPending();
      if (row.enabled_at) throw twoFactorErrors.alreadyOn();
      const code = totpCodeOf(input.slice(0, 40));
      if (!code || !(await useTotpCode(deps, userId, row, code))) throw twoFactorErrors.wrongCode();
      const codes = newRecoveryCodes();
      await db.transaction(async (tx) => {
        const on = await tx.query(
          'UPDATE portal_totp SET enabled_at = now() WHERE user_id = $1 AND enabled_at IS NULL RETURNING 1',
          [userId],
        );
        if (on.length === 0) throw twoFactorErrors.alreadyOn();
        await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
        await tx.query('INSERT INTO portal_recovery_codes (user_id, code_hash) SELECT $1, unnest($2::text[])', [
          userId,
          codes.map((c) => recoveryCodeHash(c)!),
        ]);
      });
      await takeBack(db, attempt);
      return codes;
    },

    /** Turns it off (the caller has re-checked the password) with a code of the app or a recovery code. */
    async disable(userId: string, input: string, address: string): Promise<void> {
      await checkCode(deps, userId, input, address, recheckSubjects(deps, userId));
      await db.transaction(async (tx) => {
        await tx.query('DELETE FROM portal_totp WHERE user_id = $1', [userId]);
        await tx.query('DELETE FROM portal_recovery_codes WHERE user_id = $1', [userId]);
        await tx.query('DELETE FROM portal_login_challenges WHERE user_id = $1', [userId]);
      });
    },

    /**
     * New recovery codes for a user whose two-factor sign-in is on (the caller has re-checked the
     * password): the old ones, used or not, stop working in the same transaction.
     */
    regenerateRecoveryCodes: (userId: string) => replaceRecoveryCodes(db, userId),

    startChallenge: (userId: string) => startChallenge(db, userId),
    challengeUser: (id: string) => challengeUser(db, id),
    completeChallenge: (id: string, input: string, address: string) => completeChallenge(deps, id, input, address),
  };
}

/** The purger's pass: login challenges past their few minutes. */
export async function purgeLoginChallenges(db: Pick<Db, 'query'>): Promise<number> {
  const rows = await db.query('DELETE FROM portal_login_challenges WHERE expires_at < now() RETURNING 1');
  return rows.length;
}
