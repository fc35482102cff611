// TOTP (RFC 6238) through the `otpauth` library: SHA-1, 6 digits, 30-second steps, the parameters
// every authenticator app reads from an otpauth:// URI. Codes are compared by the library in
// constant time; which time step matched is returned so a used code can be refused (replay).
import crypto from 'node:crypto';

import { Secret, TOTP } from 'otpauth';

import { safeEqual, sha256Hex } from '../shared/crypto.js';

export const TOTP_PERIOD_SECONDS = 30;
const DIGITS = 6;
/** One step either side of now: a phone clock up to 30 s off, or a code typed as it changes. */
const WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

/** A new secret: 160 random bits (RFC 4226's recommended length), in base32 as apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads (as a link or from a QR code). */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  return totp(secretBase32, issuer, account).toString();
}

function totp(secretBase32: string, issuer = 'ChatGate', label = 'portal') {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A code as typed: digits only (spaces taken out), or null when it cannot be a TOTP code. */
export function totpCodeOf(input: string): string | null {
  const code = input.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
}

/** The time step `code` belongs to (within the window around `now`), or null when it matches none. */
export function matchingStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const delta = totp(secretBase32).validate({ token: code, timestamp: now, window: WINDOW });
  if (delta === null) return null;
  return Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Ten recovery codes of 12 characters (60 random bits each), shown as XXXX-XXXX-XXXX. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = crypto.randomBytes(12);
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
    return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
  });
}

/** What is kept of a recovery code: the SHA-256 of its characters, without dashes, upper case. */
export function recoveryCodeHash(input: string): string | null {
  const code = input.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return code.length === 12 ? sha256Hex(`recovery:${code}`) : null;
}

/** Which of `hashes` equals `hash`, every one compared in constant time (no early exit). */
export function findHash(hashes: string[], hash: string): string | null {
  let found: string | null = null;
  for (const h of hashes) if (safeEqual(h, hash)) found = h;
  return found;
}
