// POST /__emulator/inbound: posts an inbound message webhook, as if a user had written to the
// number (text, another type, a reply with context, a user-id change, or any kind the provider
// posts given as its provider-shaped `message` fields; docs/emulator.md).
import type { FastifyInstance } from 'fastify';

import { newWamid } from './emulator-common.js';
import { type InboundMediaBody, inboundMediaObject } from './emulator-inbound-media.js';
import type { EmulatorState } from './emulator-state.js';
import { unixSeconds } from './emulator-user-preferences.js';
import { envelope, type WebhookSender } from './emulator-webhook-sender.js';

type InboundBody = {
  phoneNumberId: string;
  from?: string;
  text?: string;
  name?: string;
  type?: string;
  contextId?: string;
  timestamp?: number | string;
  fromUserId?: string;
  /**
   * `contacts`: the user id only in `contacts[0].user_id`, not in `messages[].from_user_id` (as
   * some of the provider's payloads for a user who hides their number).
   */
  userIdIn?: 'contacts';
  previousUserId?: string;
  /** A file of the message's `type` (image, audio, video, sticker, document): emulator-inbound-media.ts. */
  media?: InboundMediaBody;
  /**
   * A message of any kind, in the provider's shape without id, from and timestamp (which the
   * emulator fills): `type` and the object of that kind, optionally `context` and `errors`.
   */
  message?: Record<string, unknown>;
};

/** The kinds the provider posts, each with its object (unsupported's is optional). */
const KINDS = new Set([
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'reaction',
  'location',
  'contacts',
  'interactive',
  'button',
  'system',
  'unsupported',
  'order',
]);

/** Why a provider-shaped message is not one the provider would post, or null. */
function invalidMessage(m: Record<string, unknown>): string | null {
  const type = m.type;
  if (typeof type !== 'string' || !KINDS.has(type)) return `message.type must be one of ${[...KINDS].join(', ')}`;
  const body = m[type];
  if (type === 'contacts') return Array.isArray(body) && body.length > 0 ? null : 'message.contacts must be a list';
  if (type === 'unsupported') return null;
  return body && typeof body === 'object' && !Array.isArray(body) ? null : `message.${type} must be an object`;
}

export function registerInboundControl(app: FastifyInstance, state: EmulatorState, sender: WebhookSender): void {
  app.post<{ Body: InboundBody }>('/__emulator/inbound', async (request, reply) => {
    const b = request.body;
    const invalid = b.message ? invalidMessage(b.message) : null;
    if (invalid) return reply.code(400).send({ error: invalid });
    const id = newWamid();
    state.inboundIds.add(id);
    const from = b.from?.replace(/^\+/, '');
    // The user's message opens the customer-service window at its time (the portfolio limit does not count it).
    const at = Number(unixSeconds(b.timestamp)) * 1000;
    for (const user of [from, b.fromUserId]) if (user) state.lastInbound.set(`${b.phoneNumberId}:${user}`, at);
    const message: Record<string, unknown> = { ...(from ? { from } : {}), id, timestamp: unixSeconds(b.timestamp) };
    message.type = b.previousUserId ? 'system' : (b.message?.type ?? b.type ?? 'text');
    if (b.fromUserId && !b.previousUserId && b.userIdIn !== 'contacts') message.from_user_id = b.fromUserId;
    if (message.type === 'text' && !b.message) message.text = { body: b.text ?? '' };
    // The provider's user_changed_user_id: the new id in `system.user_id`, the old one only in the
    // body, the number (`wa_id`) only when the user shows it, and no `contacts`.
    if (b.previousUserId)
      message.system = {
        body: `User ${b.name ?? 'Emulated User'} changed from ${b.previousUserId} to ${b.fromUserId ?? ''}`,
        ...(from ? { wa_id: from } : {}),
        user_id: b.fromUserId,
        type: 'user_changed_user_id',
      };
    if (b.contextId) message.context = { from: '15550000000', id: b.contextId };
    if (b.message) {
      // The emulator's id, number and time win over any in the given fields.
      const fields = Object.entries(b.message).filter(([k]) => k !== 'id' && k !== 'from' && k !== 'timestamp');
      Object.assign(message, Object.fromEntries(fields));
      if (b.contextId) message.context = { ...(b.message.context as object), from: '15550000000', id: b.contextId };
    }
    // A file the emulator keeps and serves (emulator-inbound-media.ts), over any fields given for the kind.
    if (b.media) {
      const kind = String(message.type);
      message[kind] = { ...(message[kind] as object), ...inboundMediaObject(state, b.phoneNumberId, kind, b.media) };
    }
    // A number onboarded by Embedded Signup sends the app nothing until the app subscribed to its WABA.
    const signup = [...state.signups.values()].find((s) => s.phoneNumberId === b.phoneNumberId);
    if (signup && !signup.subscribed) return { id, delivered: false, reason: 'app not subscribed to the WABA' };
    const contact = { profile: { name: b.name ?? 'Emulated User' }, ...(from ? { wa_id: from } : {}) };
    const status = await sender.post(
      envelope(state, b.phoneNumberId, {
        ...(b.previousUserId ? {} : { contacts: [{ ...contact, ...(b.fromUserId ? { user_id: b.fromUserId } : {}) }] }),
        messages: [message],
      }),
      b.phoneNumberId,
    );
    return { id, delivered: status === 200 };
  });
}
