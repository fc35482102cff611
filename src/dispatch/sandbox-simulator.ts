// The spec's sandbox cycles, decided from the recipient's last two digits; nothing leaves the service.
//   ...99: failed (SANDBOX_SIMULATED_FAILURE)   ...88: sent -> delivered -> read   other: sent -> delivered
import crypto from 'node:crypto';

import type { Transition } from '../lifecycle/transitions.js';
import * as transition from '../lifecycle/transitions.js';
import { type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';

export type ClaimedMessage = { id: string; status: MessageStatus; recipient: string };

export function simulateSandboxStep(m: ClaimedMessage, now: Date, stepMs: number): Transition | null {
  const later = new Date(now.getTime() + stepMs);
  const reads = m.recipient.endsWith('88');
  switch (m.status) {
    case 'pending':
    case 'queued':
      if (m.recipient.endsWith('99')) {
        const error = {
          code: SEND_ERROR_CODES.SANDBOX_SIMULATED_FAILURE,
          message: 'Simulated failure: sandbox recipient ending in 99',
        };
        return transition.failed(m, now, error, true);
      }
      return transition.sent(m, now, `sandbox.${crypto.randomUUID()}`, later);
    case 'sent':
      return transition.delivered(m, now, reads ? later : null);
    case 'delivered':
      return reads ? transition.read(m, now) : null;
    default:
      return null;
  }
}
