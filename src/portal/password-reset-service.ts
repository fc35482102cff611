// Password reset by email (decision 0051), when SMTP is configured: a request answers the same
// whether or not the address has an account (no enumeration; links are made and mailed after the
// answer, decision 0056; an address with accounts at several customers gets a link for each),
// is throttled per address and per client, and mails a single-use link (only its SHA-256 kept)
// that works for RESET_MINUTES. Using it sets the password and ends every session of the user.
import crypto from 'node:crypto';

import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { sha256Hex } from '../shared/crypto.js';
import { AppError } from '../shared/errors.js';
import type { Mailer } from './mailer.js';
import { hashPassword, passwordProblem } from './password.js';
import { insertReset, purgeResets, spendOpenResets, spendReset } from './password-reset-store.js';
import { endUserSessions } from './portal-session-store.js';
import { setPassword } from './portal-user-store.js';
import { endChallenges } from './two-factor-store.js';
import { MAX_ACCOUNTS_PER_EMAIL, portalErrors, throttle } from './user-service.js';

export const RESET_MINUTES = 30;
/** Reset mails to one address within the login window (15 minutes): a mailbox is not flooded. */
export const RESETS_PER_EMAIL = 3;

export const resetErrors = {
  notConfigured: () =>
    new AppError(404, 'password_reset_off', {
      message:
        'Password reset by email is not set up on this service. Ask your operator to reset your password; they send you a new link.',
    }),
  linkInvalid: () =>
    new AppError(404, 'reset_link_invalid', {
      message: 'This password reset link is unknown, used or expired. Ask for a new one.',
    }),
};

type ResetDeps = { db: Db; log: Logger; publicBaseUrl: string; mailer: Mailer | null; maxPerAddress: number };

export type ResetUser = { id: string; customerId: string; email: string };
export type PasswordResetService = ReturnType<typeof createPasswordResetService>;

function mailText(link: string, customerName: string): string {
  return [
    `Someone (we hope you) asked to reset the password of your ChatGate portal account at ${customerName}.`,
    '',
    `Choose a new password here (the link works once, for ${RESET_MINUTES} minutes):`,
    link,
    '',
    'If you did not ask, ignore this mail: your password stays as it is.',
  ].join('\n');
}

async function userOfToken(db: Pick<Db, 'query'>, token: string): Promise<ResetUser> {
  if (token.length < 20 || token.length > 100) throw resetErrors.linkInvalid();
  const rows = await db.query<{ id: string; customer_id: string; email: string }>(
    `SELECT u.id, u.customer_id, u.email FROM portal_password_resets r JOIN portal_users u ON u.id = r.user_id
      WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now()
        AND u.disabled_at IS NULL AND u.password_hash IS NOT NULL`,
    [sha256Hex(token)],
  );
  const r = rows[0];
  if (!r) throw resetErrors.linkInvalid();
  return { id: r.id, customerId: r.customer_id, email: r.email };
}

export function createPasswordResetService(deps: ResetDeps) {
  const { db, log, mailer } = deps;
  return {
    enabled: mailer !== null,

    /**
     * Takes a reset request: throttled per client address and per email address (every request
     * counts, known address or not). Nothing here depends on whether the address has an account:
     * the caller answers, then runs `mailLinks` (decision 0056), so neither the database work for
     * an account nor its mail can show in the answer's time. Returns the normalised address.
     */
    async request(emailRaw: string, address: string): Promise<string> {
      if (!mailer) throw resetErrors.notConfigured();
      const email = emailRaw.trim().toLowerCase().slice(0, 320);
      await throttle(
        db,
        [
          { subject: `reset-ip:${address}`, limit: deps.maxPerAddress },
          { subject: `reset-email:${email}`, limit: RESETS_PER_EMAIL },
        ],
        address,
        'password reset requests',
      );
      return email;
    },

    /**
     * After the answer: for each active account of the address (one per customer it is a user
     * at), a new link (earlier ones stop working), mailed; a failed send is logged without the
     * link. Returns the users a link was made for (to audit); none for an unknown address.
     */
    async mailLinks(email: string): Promise<ResetUser[]> {
      if (!mailer) return [];
      const rows = await db.query<{ id: string; customer_id: string; name: string }>(
        `SELECT u.id, u.customer_id, c.name FROM portal_users u JOIN customers c ON c.id = u.customer_id
          WHERE u.email = $1 AND u.disabled_at IS NULL AND u.password_hash IS NOT NULL
          ORDER BY u.created_at, u.id LIMIT $2`,
        [email, MAX_ACCOUNTS_PER_EMAIL],
      );
      const users: ResetUser[] = [];
      for (const user of rows) {
        const token = crypto.randomBytes(32).toString('base64url');
        await db.transaction(async (tx) => {
          await spendOpenResets(tx, user.id);
          await insertReset(tx, sha256Hex(token), user.id, RESET_MINUTES);
        });
        users.push({ id: user.id, customerId: user.customer_id, email });
        const link = `${deps.publicBaseUrl}/portal/password-reset/${token}`;
        await mailer
          .send({ to: email, subject: 'Reset your ChatGate portal password', text: mailText(link, user.name) })
          .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'portal: password reset mail not sent'));
      }
      return users;
    },

    /** The user of a live link (the form is shown only for one). */
    check: (token: string) => userOfToken(db, token),

    /**
     * Sets the new password from a link: the link is spent in the same transaction, every other
     * link of the user stops working, every session ends, pending login challenges go.
     */
    async reset(token: string, password: string): Promise<ResetUser> {
      const user = await userOfToken(db, token);
      const problem = passwordProblem(password, user.email);
      if (problem) throw portalErrors.weakPassword(problem);
      const hash = await hashPassword(password);
      await db.transaction(async (tx) => {
        if (!(await spendReset(tx, sha256Hex(token)))) throw resetErrors.linkInvalid();
        await spendOpenResets(tx, user.id);
        await setPassword(tx, user.id, hash);
        await endUserSessions(tx, user.id);
        await endChallenges(tx, user.id);
      });
      return user;
    },
  };
}

/** The purger's pass: reset links past their expiry (used or not). */
export function purgePasswordResets(db: Pick<Db, 'query'>): Promise<number> {
  return purgeResets(db);
}
