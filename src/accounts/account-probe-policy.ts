// Which account marks the prober re-verifies, and what a probe's answer means.
import type { LookupOutcome } from '../provider/cloud-api.js';
import { classifyProviderError } from '../provider/error-map.js';

/**
 * Marks re-verified by a probe: a rejected token (190 / 0), which the provider also answers
 * transiently. Other account errors (missing permission, restriction, lock, payment, number
 * deleted, spam or messaging limits) are not: a read of the phone number cannot tell whether
 * they are over, so they stay with the operator.
 */
export const PROBED_ACCOUNT_ERRORS: ReadonlySet<string> = new Set(['AUTH_REJECTED']);

export type ProbeVerdict = 'accepted' | 'rejected' | 'inconclusive';

/**
 * `accepted`: the provider took the token (a 2xx, or a permission error: only an authenticated
 * call gets one, e.g. a token with the messaging permission alone may not read the number).
 * `rejected`: the token is still refused. `inconclusive`: anything else (network, timeout, 5xx,
 * throttling, an unknown number), which proves nothing either way.
 */
export function judgeProbe(outcome: LookupOutcome): ProbeVerdict {
  if (outcome.ok) return 'accepted';
  if (outcome.transport !== null) return 'inconclusive';
  const verdict = classifyProviderError(
    outcome.detail?.code ?? null,
    outcome.detail?.subcode ?? null,
    outcome.httpStatus,
  );
  if (verdict.action !== 'account') return 'inconclusive';
  if (verdict.errorCode === 'PERMISSION_DENIED') return 'accepted';
  return PROBED_ACCOUNT_ERRORS.has(verdict.errorCode) ? 'rejected' : 'inconclusive';
}
