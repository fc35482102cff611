// The one shape of a message.status event, whoever moved the message (a worker's transition or a
// provider receipt). Written to the outbox in the transaction of the change.
import type { OutboxEvent } from '../events/outbox.js';
import type { SendErrorDetail } from './transitions.js';
import { isCounted } from './usage-rollup.js';

/** The message as the event names it. */
export type EventMessage = {
  id: string;
  customerId: string;
  externalId: string;
  channel: string;
  recipient: string;
  /** The user id the send addressed (decision 0036); absent where the row was read without it. */
  recipientUserId?: string | null;
  chatAccountId: string;
  /** Sent with a sandbox key: its events go to sandbox endpoints too (decision 0024-sandbox-keys). */
  sandbox: boolean;
};

export type StatusChange = {
  message: EventMessage;
  from: string;
  to: string;
  /** When it happened (provider time when known). */
  at: Date;
  /** The message's error; only a `failed` event carries it. */
  error: SendErrorDetail | null;
};

function userIdOf(m: EventMessage): { recipientUserId?: string } {
  const id = m.recipientUserId ?? (m.recipient.startsWith('+') ? null : m.recipient);
  return id ? { recipientUserId: id } : {};
}

export function messageStatusEvent(c: StatusChange): OutboxEvent {
  return {
    customerId: c.message.customerId,
    type: 'message.status',
    sandbox: c.message.sandbox,
    // A live message's first reach of a counted status is a usage step (decision 0078).
    usageAccountId: !c.message.sandbox && isCounted(c.to) ? c.message.chatAccountId : null,
    createdAt: new Date(),
    data: {
      messageId: c.message.id,
      externalId: c.message.externalId,
      status: c.to,
      previousStatus: c.from,
      channel: c.message.channel,
      recipient: c.message.recipient,
      // Addition (decision 0036), only on a send by user id: events of sends to a number keep
      // their exact shape. A recipient that is not a number is an id.
      ...userIdOf(c.message),
      chatAccountId: c.message.chatAccountId,
      timestamp: c.at.toISOString(),
      error: c.to === 'failed' ? publicEventError(c.error) : null,
    },
  };
}

/** The event's error: `{ code, message, provider? }`, provider without its internal `source`. */
function publicEventError(e: SendErrorDetail | null) {
  if (!e) return null;
  if (!e.provider) return { code: e.code, message: e.message };
  const { source: _source, ...provider } = e.provider;
  return { code: e.code, message: e.message, provider };
}
