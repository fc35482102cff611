// The provider client's reports turned into metrics: latency per operation, each send attempt's
// outcome through the same error table the dispatcher uses, and throttling refusals by account.
import type { ProviderObserver } from '../provider/cloud-api.js';
import { classifySendFailure } from '../provider/error-map.js';
import { CONTENT_TYPES } from '../shared/vocab.js';
import type { Metrics } from './metrics.js';

/** The provider's throughput (130429) and pair-rate (131056) refusals. */
const THROTTLING_CODES = new Set([130429, 131056]);

export function providerObserver(
  metrics: Pick<Metrics, 'providerRequestDuration' | 'sendAttempts' | 'countThrottled'>,
): ProviderObserver {
  return {
    request: (operation, seconds) => metrics.providerRequestDuration.observe({ operation }, seconds),
    sendOutcome(outcome, accountId, kind) {
      // The kind label takes only the content types of the vocabulary (bounded).
      const content_type = (CONTENT_TYPES as readonly string[]).includes(kind) ? kind : 'other';
      if (outcome.ok) {
        metrics.sendAttempts.inc({ outcome: 'sent', code: '', content_type });
        return;
      }
      const verdict = classifySendFailure(outcome);
      metrics.sendAttempts.inc({
        outcome:
          verdict.action === 'retry' ? 'transient' : verdict.action === 'unconfirmed' ? 'unconfirmed' : 'permanent',
        code: verdict.errorCode,
        content_type,
      });
      const code = outcome.detail?.code;
      if (code != null && THROTTLING_CODES.has(code)) metrics.countThrottled(accountId, code);
    },
  };
}
