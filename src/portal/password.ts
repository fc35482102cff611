// Portal passwords: scrypt from node:crypto (memory-hard, no native addon to build), a length
// floor and a refusal of the most common breached passwords.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

import { safeEqual } from '../shared/crypto.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

/**
 * N = 2^15, r = 8, p = 1: 32 MiB of memory and about 50-100 ms per hash on one core, the
 * interactive-login parameters OWASP's password storage cheat sheet lists for scrypt.
 */
export const SCRYPT_PARAMS = { N: 32768, r: 8, p: 1, keylen: 32 } as const;
const MAXMEM = 64 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 200;

/** What is wrong with a new password, or null. The same words appear in the portal and the CLI. */
export function passwordProblem(password: string, email: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters long`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters long`;
  const lower = password.toLowerCase();
  // Each rule says itself which one it is (issue #37): the person knows what to change.
  if (COMMON_PASSWORDS.has(lower)) return 'is one of the most commonly breached passwords: choose another';
  if (lower === email.toLowerCase()) return 'is your email address: choose another';
  if (lower.includes(email.split('@')[0]!.toLowerCase()))
    return 'contains the name part of your email address (before the @): choose another';
  if (new Set(password).size < 4) return 'must use more than a few distinct characters';
  return null;
}

/** "scrypt$N$r$p$salt$hash" (salt and hash base64url), so the parameters can change later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const { N, r, p, keylen } = SCRYPT_PARAMS;
  const hash = await scrypt(password, salt, keylen, { N, r, p, maxmem: MAXMEM });
  return ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // Without a stored hash a hash is still computed, so an unknown account costs the same time.
  const parts = (stored ?? `scrypt$${SCRYPT_PARAMS.N}$8$1$${'A'.repeat(22)}$x`).split('$');
  const [kind, n, r, p, salt, hash] = parts;
  if (kind !== 'scrypt' || !n || !r || !p || !salt || hash === undefined) return false;
  const got = await scrypt(password, Buffer.from(salt, 'base64url'), SCRYPT_PARAMS.keylen, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  });
  return stored !== null && safeEqual(got.toString('base64url'), hash);
}
