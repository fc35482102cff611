// What can happen to a message. A worker claims it (pending → queued, see claim.ts), then one
// of these transitions records the outcome; applyTransitions writes a batch of them, with their
// message.status events, and provider receipts move it further forward (apply-receipt.ts):
//
//   pending/queued ──sent──▶ sent ──▶ delivered ──▶ read
//        │  ▲                  │
//        │  └─ retry, wait     └──▶ failed (a receipt, before delivery)
//        └──failed / cancelled──▶ failed
//
// Workers build transitions with these functions and never write the rows themselves.
import type { ProviderRoute } from '../provider/cloud-api.js';
import type { ProviderMediaRef } from '../provider/payload.js';
import { type MessageStatus, SEND_ERROR_CODES } from '../shared/vocab.js';

export type SendErrorDetail = {
  code: string;
  message: string;
  provider?: {
    code: number | null;
    subcode: number | null;
    message: string | null;
    fbtraceId: string | null;
    source: 'send_attempt' | 'status_webhook';
  };
};

export type Transition = {
  id: string;
  from: MessageStatus;
  to: MessageStatus;
  /** When the transition happened (provider time when known). */
  at: Date;
  providerMessageId?: string;
  /** The provider endpoint that carried a send (decision 0038). */
  route?: ProviderRoute;
  /** The media step's result: the file as uploaded to the provider. */
  providerMedia?: ProviderMediaRef;
  error?: SendErrorDetail;
  /** When a worker should act on the row next; null when nothing is left to do. */
  nextDueAt: Date | null;
  /** This transition is the outcome of a send attempt (counts in attemptCount). */
  attempted: boolean;
  /**
   * Its attempt was already counted when the send or media step started (startAttempts): not
   * counted again, and given back when the step made no attempt after all (media ready, media
   * unavailable).
   */
  countedAtStart?: boolean;
};

/** How much a transition adds to attemptCount. */
export function attemptsAdded(t: Transition): number {
  if (t.countedAtStart) return t.attempted ? 0 : -1;
  return t.attempted ? 1 : 0;
}

/** An outcome whose attempt startAttempts counted (see Transition.countedAtStart). */
export function countedAtStart(t: Transition): Transition {
  return { ...t, countedAtStart: true };
}

/** The message a transition starts from: its id and the status the worker saw. */
export type MessageState = { id: string; status: MessageStatus };

/**
 * A message claimed again with every attempt counted and no outcome recorded for the last: each
 * try stopped its worker (or lost its outcome) during the send, so it is not sent again.
 */
export const INTERRUPTED_ERROR: SendErrorDetail = {
  code: SEND_ERROR_CODES.SEND_INTERRUPTED,
  message:
    'Every send attempt was used up and the last one never finished: the worker stopped during the send (the provider may or may not have received it)',
};

/** A cancelled broadcast's message that had not left (failed through fail-unsent.ts). */
export const CANCELLED_ERROR: SendErrorDetail = {
  code: SEND_ERROR_CODES.BROADCAST_CANCELLED,
  message: 'The broadcast was cancelled before this message was sent',
};

/** The provider accepted the send (`nextDueAt` only for the sandbox's simulated receipts). */
export function sent(
  m: MessageState,
  at: Date,
  providerMessageId: string,
  nextDueAt: Date | null = null,
  route?: ProviderRoute,
): Transition {
  return {
    id: m.id,
    from: m.status,
    to: 'sent',
    at,
    providerMessageId,
    nextDueAt,
    attempted: true,
    ...(route ? { route } : {}),
  };
}

/** An attempt that may succeed later: queued again until `nextDueAt`. */
export function retry(m: MessageState, at: Date, error: SendErrorDetail, nextDueAt: Date): Transition {
  return { id: m.id, from: m.status, to: 'queued', at, error, nextDueAt, attempted: true };
}

/** Failed for good; `attempted` when the failure is a send attempt's outcome. */
export function failed(m: MessageState, at: Date, error: SendErrorDetail, attempted: boolean): Transition {
  return { id: m.id, from: m.status, to: 'failed', at, error, nextDueAt: null, attempted };
}

/** The sandbox's simulated receipts (real receipts go through applyReceipts). */
export function delivered(m: MessageState, at: Date, nextDueAt: Date | null): Transition {
  return { id: m.id, from: m.status, to: 'delivered', at, nextDueAt, attempted: false };
}

export function read(m: MessageState, at: Date): Transition {
  return { id: m.id, from: m.status, to: 'read', at, nextDueAt: null, attempted: false };
}

/** No step taken: the lease is given back and the message is due again at `nextDueAt`. */
export function wait(m: MessageState, at: Date, nextDueAt: Date): Transition {
  return { id: m.id, from: m.status, to: m.status, at, nextDueAt, attempted: false };
}

/** The media step is done: the provider's media is kept and the message is due at once for its send. */
export function mediaReady(m: MessageState, at: Date, providerMedia: ProviderMediaRef): Transition {
  return { id: m.id, from: m.status, to: m.status, at, providerMedia, nextDueAt: at, attempted: false };
}
