// The spec's sandbox cycles, decided from the recipient's last two digits; nothing leaves the service.
//   ...99: failed (SANDBOX_SIMULATED_FAILURE)   ...88: sent -> delivered -> read   other: sent -> delivered
import crypto from 'node:crypto';

import type { Transition } from '../lifecycle/apply-transitions.js';
import { type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';

export type ClaimedMessage = { id: string; status: MessageStatus; recipient: string };

export function simulateSandboxStep(m: ClaimedMessage, now: Date, stepMs: number): Transition | null {
  const later = new Date(now.getTime() + stepMs);
  const reads = m.recipient.endsWith('88');
  switch (m.status) {
    case 'pending':
    case 'queued':
      if (m.recipient.endsWith('99')) {
        return {
          id: m.id,
          from: m.status,
          to: 'failed',
          at: now,
          nextDueAt: null,
          attempted: true,
          error: {
            code: SEND_ERROR_CODES.SANDBOX_SIMULATED_FAILURE,
            message: 'Simulated failure: sandbox recipient ending in 99',
          },
        };
      }
      return {
        id: m.id,
        from: m.status,
        to: 'sent',
        at: now,
        nextDueAt: later,
        attempted: true,
        providerMessageId: `sandbox.${crypto.randomUUID()}`,
      };
    case 'sent':
      return { id: m.id, from: 'sent', to: 'delivered', at: now, nextDueAt: reads ? later : null, attempted: false };
    case 'delivered':
      return reads ? { id: m.id, from: 'delivered', to: 'read', at: now, nextDueAt: null, attempted: false } : null;
    default:
      return null;
  }
}
