// The operator API's token check (Authorization: Bearer ADMIN_TOKEN), shared by every /admin route:
// compared in constant time (digests of equal length, so neither the token's length nor a common
// prefix shows in the timing), and throttled per client address: after ADMIN_MAX_FAILURES (10)
// wrong tokens within a minute of the first, that address is answered 429 (Retry-After) until
// the minute ends, whatever token it sends (a right guess must not show), so that guessing the
// token costs a minute per ten tries.
import crypto from 'node:crypto';

import type { FastifyRequest } from 'fastify';

import { AppError, errors } from '../shared/errors.js';

export const OPERATOR_FAILURE_WINDOW_MS = 60_000;
/** Addresses remembered at most (the oldest window is forgotten first): memory stays bounded. */
const MAX_TRACKED = 10_000;

const digest = (value: string) => crypto.createHash('sha256').update(value).digest();

export type OperatorAuth = (request: FastifyRequest) => Promise<void>;

/** An onRequest hook for the operator routes; one per process, shared by all of them. */
export function createOperatorAuth(adminToken: string, maxFailures: number): OperatorAuth {
  const expected = digest(`Bearer ${adminToken}`);
  const failures = new Map<string, { count: number; until: number }>();

  const windowOf = (address: string, now: number) => {
    const w = failures.get(address);
    if (w && w.until <= now) {
      failures.delete(address);
      return null;
    }
    return w ?? null;
  };

  return async (request) => {
    const now = Date.now();
    const address = request.ip;
    const window = windowOf(address, now);
    if (window && window.count >= maxFailures) throw tooManyAttempts(window.until - now);
    const given = request.headers.authorization ?? '';
    if (crypto.timingSafeEqual(digest(given), expected)) return;
    if (window) window.count++;
    else {
      if (failures.size >= MAX_TRACKED) {
        for (const [a, w] of failures) if (w.until <= now) failures.delete(a);
        if (failures.size >= MAX_TRACKED) failures.delete(failures.keys().next().value!);
      }
      failures.set(address, { count: 1, until: now + OPERATOR_FAILURE_WINDOW_MS });
    }
    throw errors.unauthorized();
  };
}

function tooManyAttempts(remainingMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return new AppError(
    429,
    'too_many_attempts',
    { message: `too many wrong operator tokens from this address: try again in ${seconds} s` },
    { 'retry-after': String(seconds) },
  );
}
