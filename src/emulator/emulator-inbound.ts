// POST /__emulator/inbound: posts an inbound message webhook, as if a user had written to the
// number (text, another type, a reply with context, a user-id change; docs/emulator.md).
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
  previousUserId?: string;
  /** A file of the message's `type` (image, audio, video, sticker, document): emulator-inbound-media.ts. */
  media?: InboundMediaBody;
};

export function registerInboundControl(app: FastifyInstance, state: EmulatorState, sender: WebhookSender): void {
  app.post<{ Body: InboundBody }>('/__emulator/inbound', async (request) => {
    const b = request.body;
    const id = newWamid();
    const from = b.from?.replace(/^\+/, '');
    const message: Record<string, unknown> = { ...(from ? { from } : {}), id, timestamp: unixSeconds(b.timestamp) };
    message.type = b.previousUserId ? 'system' : (b.type ?? 'text');
    if (b.fromUserId) message.from_user_id = b.fromUserId;
    if (message.type === 'text') message.text = { body: b.text ?? '' };
    if (b.media)
      message[String(message.type)] = inboundMediaObject(state, b.phoneNumberId, String(message.type), b.media);
    if (b.previousUserId)
      message.system = { body: 'User changed', type: 'user_changed_user_id', previous_user_id: b.previousUserId };
    if (b.contextId) message.context = { from: '15550000000', id: b.contextId };
    const contact = { profile: { name: b.name ?? 'Emulated User' }, ...(from ? { wa_id: from } : {}) };
    const status = await sender.post(
      envelope(state, b.phoneNumberId, {
        contacts: [{ ...contact, ...(b.fromUserId ? { user_id: b.fromUserId } : {}) }],
        messages: [message],
      }),
      b.phoneNumberId,
    );
    return { id, delivered: status === 200 };
  });
}
