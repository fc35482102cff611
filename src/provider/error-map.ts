// One table from the provider's error codes to what we do: retry, fail the message, or fail it
// and mark the account (whose other messages then fail without a call; see docs/api.md).
// Classified by `code` (the provider's advice), never by HTTP status alone.
import type { AccountStatus } from '../shared/vocab.js';
import type { SendOutcome } from './cloud-api.js';

export type Verdict =
  | {
      action: 'retry';
      errorCode: string;
      minDelayMs?: number;
      perRecipient?: boolean;
      throttled?: boolean;
      /** The whole account is refused for a while (131057): its sends pause together (decision 0042). */
      pausesAccount?: boolean;
      /** The number's throughput was exceeded (130429): the account's send pace is lowered (decision 0055). */
      slowsAccount?: boolean;
    }
  | { action: 'fail'; errorCode: string; message?: string }
  | { action: 'account'; errorCode: string; accountStatus: AccountStatus }
  /**
   * The request reached a connection and no answer came: the provider may have the message. It is
   * never sent again; it waits for the provider's receipt (decision 0061).
   */
  | { action: 'unconfirmed'; errorCode: string };

type Rule = Verdict | ((subcode: number | null) => Verdict);

const retry = (errorCode: string, extra: Partial<Extract<Verdict, { action: 'retry' }>> = {}): Verdict => ({
  action: 'retry',
  errorCode,
  ...extra,
});
const fail = (errorCode: string, message?: string): Verdict => ({
  action: 'fail',
  errorCode,
  ...(message !== undefined ? { message } : {}),
});

/** Our message for REENGAGEMENT_REQUIRED (131047, or a send that required the window): what to do. */
export const REENGAGEMENT_MESSAGE =
  "The recipient's 24-hour reply window is closed (the number has not written in the last 24 hours): send an approved template instead";
/** Our message for API_VERSION_UNSUPPORTED: what the operator has to change. */
export const API_VERSION_MESSAGE =
  'The provider refused the Graph API version this service calls (PROVIDER_API_VERSION): it is expired or unknown there; set a version the provider serves and restart';
const account = (errorCode: string, accountStatus: AccountStatus): Verdict => ({
  action: 'account',
  errorCode,
  accountStatus,
});

const RULES: Record<number, Rule> = {
  // Credentials and permissions: the account needs the operator.
  0: account('AUTH_REJECTED', 'ERROR'),
  190: account('AUTH_REJECTED', 'ERROR'),
  3: account('PERMISSION_DENIED', 'ERROR'),
  10: account('PERMISSION_DENIED', 'ERROR'),
  131005: account('PERMISSION_DENIED', 'ERROR'),
  368: account('ACCOUNT_RESTRICTED', 'BANNED'),
  131031: account('ACCOUNT_LOCKED', 'ERROR'),
  131042: account('ACCOUNT_PAYMENT_ISSUE', 'ERROR'),
  33: account('PHONE_NUMBER_DELETED', 'DISCONNECTED'),
  133010: account('PHONE_NUMBER_NOT_REGISTERED', 'DISCONNECTED'),
  131045: account('PHONE_NUMBER_REGISTRATION_ERROR', 'ERROR'),
  131048: account('SPAM_RATE_LIMITED', 'ERROR'),
  131064: account('MESSAGING_LIMITED', 'ERROR'),
  // Transient: throttling and provider trouble.
  // Throughput throttling clears within about a second: retried on the short schedule.
  4: retry('PROVIDER_RATE_LIMITED', { throttled: true }),
  80007: retry('PROVIDER_RATE_LIMITED', { throttled: true }),
  // The number's own throughput exceeded: the account is sent slower for a while (decision 0055).
  130429: retry('PROVIDER_RATE_LIMITED', { throttled: true, slowsAccount: true }),
  131056: retry('RECIPIENT_RATE_LIMITED', { perRecipient: true }),
  1: retry('PROVIDER_UNAVAILABLE'),
  2: retry('PROVIDER_UNAVAILABLE'),
  131000: retry('PROVIDER_UNAVAILABLE'),
  131016: retry('PROVIDER_UNAVAILABLE'),
  // Maintenance mode, e.g. a throughput upgrade (up to a minute): every send of the number is
  // refused, so the account's sends pause together instead of each retrying alone (decision 0042).
  131057: retry('PROVIDER_UNAVAILABLE', { minDelayMs: 60_000, pausesAccount: true }),
  133004: retry('PROVIDER_UNAVAILABLE'),
  // Permanent for this message.
  100: fail('INVALID_PARAMETER'),
  131008: fail('INVALID_PARAMETER'),
  131009: fail('INVALID_PARAMETER'),
  135000: fail('INVALID_PARAMETER'),
  131021: fail('INVALID_RECIPIENT'),
  131026: fail('UNDELIVERABLE'),
  130497: fail('RECIPIENT_COUNTRY_NOT_ALLOWED'),
  130403: fail('RECIPIENT_BLOCKED'),
  // 130472 (the user is in a marketing experiment) and 131049 (the per-user marketing limit: an
  // immediate retry fails again) are permanent for every message, marketing templates included
  // (decision 0015; test/user-ids.test.ts pins it).
  130472: fail('RECIPIENT_IN_EXPERIMENT'),
  131047: fail('REENGAGEMENT_REQUIRED', REENGAGEMENT_MESSAGE),
  131049: fail('ECOSYSTEM_LIMITED'),
  131050: fail('RECIPIENT_OPTED_OUT'),
  131051: fail('UNSUPPORTED_MESSAGE_TYPE'),
  131053: fail('MEDIA_UNAVAILABLE'),
  131037: fail('DISPLAY_NAME_NOT_APPROVED'),
  131063: fail('MARKETING_DISABLED'),
  132000: fail('TEMPLATE_PARAMETERS_INVALID'),
  132012: fail('TEMPLATE_PARAMETERS_INVALID'),
  132018: fail('TEMPLATE_PARAMETERS_INVALID'),
  132001: fail('TEMPLATE_NOT_FOUND'),
  132005: fail('TEMPLATE_TOO_LONG'),
  132007: fail('TEMPLATE_POLICY_VIOLATION'),
  132015: fail('TEMPLATE_PAUSED'),
  132016: fail('TEMPLATE_DISABLED'),
  // A Graph API version the provider no longer serves (or never did): every send fails alike until
  // PROVIDER_API_VERSION is changed, so say so (docs/provider-protocol-2026.md, "API versions").
  2635: fail('API_VERSION_UNSUPPORTED', API_VERSION_MESSAGE),
  // The Marketing Messages API refused an account not onboarded there: the dispatcher sends the
  // message over /messages at once (decision 0038), so this is only counted, never recorded.
  131055: fail('MARKETING_MESSAGES_NOT_ONBOARDED'),
};

/** What to do with a provider error. Unknown codes: 5xx-like ones are retried, the rest fail. */
export function classifyProviderError(code: number | null, subcode: number | null, httpStatus: number | null): Verdict {
  if (code !== null) {
    const rule = RULES[code];
    if (typeof rule === 'function') return rule(subcode);
    if (rule) return rule;
    if (code >= 200 && code <= 299) return account('PERMISSION_DENIED', 'ERROR');
    if (code >= 133000 && code <= 133015) return fail('PHONE_NUMBER_REGISTRATION_ERROR');
  }
  if (httpStatus === 429) return retry('PROVIDER_RATE_LIMITED', { throttled: true });
  if (httpStatus !== null && httpStatus >= 500) return retry('PROVIDER_UNAVAILABLE');
  return fail('PROVIDER_ERROR');
}

/**
 * The error codes a provider answer can leave on a message (the table's, for a code without a
 * subcode, and the fallbacks): the portal's error-code filter offers them.
 */
export function providerErrorCodes(): string[] {
  const codes = Object.values(RULES).map((r) => (typeof r === 'function' ? r(null) : r).errorCode);
  return [
    ...new Set([
      ...codes,
      'PERMISSION_DENIED',
      'PHONE_NUMBER_REGISTRATION_ERROR',
      'PROVIDER_RATE_LIMITED',
      'PROVIDER_UNAVAILABLE',
      'PROVIDER_ERROR',
      'PROVIDER_UNREACHABLE',
      'PROVIDER_TIMEOUT',
      'PROVIDER_CONNECTION_LOST',
    ]),
  ];
}

/**
 * The codes of a send that may have reached the provider without our learning its answer: no
 * answer within PROVIDER_TIMEOUT_MS of the request's first byte, or the connection lost after it.
 */
export const UNCONFIRMED_CODES = { timeout: 'PROVIDER_TIMEOUT', network: 'PROVIDER_CONNECTION_LOST' } as const;
export const isUnconfirmedCode = (code: string | null): boolean =>
  code === UNCONFIRMED_CODES.timeout || code === UNCONFIRMED_CODES.network;

/**
 * What to do after a failed send. A transport failure before the request had a connection (pool
 * wait, connect refused or timed out) sent nothing: retried as PROVIDER_UNREACHABLE. One after it
 * may have reached the provider: unconfirmed, never sent again (decision 0061). Provider answers go
 * through the table.
 */
export function classifySendFailure(outcome: Extract<SendOutcome, { ok: false }>): Verdict {
  if (outcome.transport !== null)
    return outcome.sent === true
      ? { action: 'unconfirmed', errorCode: UNCONFIRMED_CODES[outcome.transport] }
      : retry('PROVIDER_UNREACHABLE');
  return classifyProviderError(outcome.detail?.code ?? null, outcome.detail?.subcode ?? null, outcome.httpStatus);
}

/** Pair-rate back-off for one recipient: 4^X seconds (X = 0, 1, 2 …), as the provider advises. */
export function pairRateDelayMs(attempt: number): number {
  return 1000 * 4 ** Math.max(0, attempt - 1);
}
