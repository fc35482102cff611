// Scheduled sends (`sendAt` on POST /messages and POST /messages/broadcast): the bounds of the
// time asked for. The message is accepted at once; its row is due at `sendAt` (decision 0012).
import type { Problem } from '../shared/errors.js';

/** A scheduled send is at least this far ahead of the request... */
export const MIN_SEND_AT_LEAD_SECONDS = 60;
/** ...and at most this far (35 days); it must also be before the message's expiry. */
export const MAX_SEND_AT_LEAD_SECONDS = 35 * 86400;

/**
 * Where `sendAt` breaks a rule, or null. The lead is counted in whole seconds, a started second
 * counting as a whole one: a request built for "60 s from now" is not refused for the
 * milliseconds it spent in transit, and "59 s from now" still is.
 */
export function sendAtProblem(sendAt: Date, now: Date, expiresAt: Date): Problem | null {
  const problem = (message: string) => ({ path: 'sendAt', message });
  const lead = Math.ceil((sendAt.getTime() - now.getTime()) / 1000);
  if (lead < MIN_SEND_AT_LEAD_SECONDS)
    return problem(`must be at least ${MIN_SEND_AT_LEAD_SECONDS} seconds in the future`);
  if (lead > MAX_SEND_AT_LEAD_SECONDS)
    return problem(`must be at most 35 days (${MAX_SEND_AT_LEAD_SECONDS} seconds) in the future`);
  if (sendAt.getTime() >= expiresAt.getTime())
    return problem(
      `must be before the message expires (${expiresAt.toISOString()}: ttlSeconds from now, clipped to the plan's retention)`,
    );
  return null;
}

/** The instant a `sendAt` names; null for a string that is not a real UTC time (2026-02-30T…). */
export function parseSendAt(value: string): Date | null {
  const at = new Date(value);
  if (Number.isNaN(at.getTime()) || at.toISOString().slice(0, 19) !== value.slice(0, 19)) return null;
  return at;
}
