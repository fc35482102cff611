// Deciding a live message's fate: the account's state and send policy first (no provider call
// when they forbid it), then the provider's answer mapped through the one error table.
import type { SendAccount } from '../accounts/send-accounts.js';
import type { Claimed } from '../lifecycle/claim.js';
import * as transition from '../lifecycle/transitions.js';
import { INTERRUPTED_ERROR, type SendErrorDetail, type Transition } from '../lifecycle/transitions.js';
import type { ProviderRoute, SendOutcome } from '../provider/cloud-api.js';
import { classifySendFailure, isUnconfirmedCode, pairRateDelayMs, type Verdict } from '../provider/error-map.js';
import { backoffDelayMs, SEND_SCHEDULE_MS, THROTTLE_SCHEDULE_MS } from '../shared/backoff.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';

/** A refusal before any provider call, or null when the message may be sent. */
export function refuseBeforeSending(m: Claimed, account: SendAccount | undefined, now: Date): Transition | null {
  // Claimed again with every attempt counted: the last one never finished (its worker stopped
  // during the send). Not sent again: a message that kills its worker would otherwise do so forever.
  if (m.attemptCount >= m.maxAttempts) return transition.failed(m, now, INTERRUPTED_ERROR, false);
  // Its last send may have reached the provider, and no receipt came while it waited: it is not
  // sent again, as that could reach the recipient twice (decision 0061).
  if (m.status === 'queued' && isUnconfirmedCode(m.lastErrorCode))
    return transition.failed(m, now, unconfirmedError(m.lastErrorCode!), false);
  if (!account || account.type !== 'OFFICIAL' || !account.phoneNumberId || !account.accessToken) {
    return transition.failed(
      m,
      now,
      { code: SEND_ERROR_CODES.ACCOUNT_NOT_CONNECTED, message: 'The chat account has no usable provider credentials' },
      false,
    );
  }
  if (account.status !== 'CONNECTED') {
    return transition.failed(
      m,
      now,
      {
        code: account.lastErrorCode ?? SEND_ERROR_CODES.ACCOUNT_NOT_CONNECTED,
        message: `The chat account is ${account.status}; the operator must reconnect it`,
      },
      false,
    );
  }
  if (account.sendPolicyMode === 'DISABLED') {
    return transition.failed(
      m,
      now,
      {
        code: SEND_ERROR_CODES.SEND_DISABLED,
        message: 'Sending is disabled for this chat account (send policy DISABLED)',
      },
      false,
    );
  }
  if (account.sendPolicyMode === 'TEST' && !account.testRecipients.includes(m.recipient)) {
    return transition.failed(
      m,
      now,
      {
        code: SEND_ERROR_CODES.SANDBOX_BLOCKED,
        message: 'The chat account is in TEST mode and the recipient is not a test recipient',
      },
      false,
    );
  }
  return null;
}

export type AttemptResult = { transition: Transition; verdict: Verdict | null };

/** An unconfirmed send that no receipt confirmed within SEND_CONFIRM_WAIT_MS. */
const unconfirmedError = (code: string): SendErrorDetail => ({
  code,
  message:
    'The provider may have received this message but never answered the send, and no receipt for it came: it is not sent again, to avoid sending it twice',
});

/** How the outcome of one attempt is recorded: the retry schedule's scale and the confirmation wait. */
export type RecordTiming = { retryTimeScale: number; confirmWaitMs: number };

/** The transition that records one send attempt's outcome. */
export function recordAttempt(
  m: Claimed,
  outcome: SendOutcome,
  now: Date,
  timing: RecordTiming,
  route?: ProviderRoute,
): AttemptResult {
  if (outcome.ok) {
    return { transition: transition.sent(m, now, outcome.providerMessageId, null, route), verdict: null };
  }
  const verdict: Verdict = classifySendFailure(outcome);
  const error: SendErrorDetail = {
    code: verdict.errorCode,
    message: (verdict.action === 'fail' ? verdict.message : undefined) ?? outcome.summary,
    ...(outcome.detail ? { provider: { ...outcome.detail, source: 'send_attempt' as const } } : {}),
  };
  // Queued, not due again until the wait ends: the provider's receipt (matched by our id, which
  // every send carries) moves it on meanwhile; otherwise the next claim fails it without a send.
  if (verdict.action === 'unconfirmed')
    return { transition: transition.retry(m, now, error, new Date(now.getTime() + timing.confirmWaitMs)), verdict };
  const attempt = m.attemptCount + 1;
  if (verdict.action === 'retry' && attempt < m.maxAttempts) {
    const minMs = verdict.perRecipient ? pairRateDelayMs(attempt) : verdict.minDelayMs;
    const delay = backoffDelayMs(attempt, verdict.throttled ? THROTTLE_SCHEDULE_MS : SEND_SCHEDULE_MS, {
      scale: timing.retryTimeScale,
      minMs,
    });
    return { transition: transition.retry(m, now, error, new Date(now.getTime() + delay)), verdict };
  }
  return { transition: transition.failed(m, now, error, true), verdict };
}
