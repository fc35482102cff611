// `chatgate emulator`: a local stand-in for the provider's Cloud API, for development, demos,
// tests and benchmarks. It speaks the same protocol (paths, bearer tokens, Graph error envelope,
// wamid ids, signed webhooks) and adds a control API under /__emulator.
import Fastify, { type FastifyInstance } from 'fastify';

import { newWamid } from './emulator-common.js';
import { registerStateControls } from './emulator-controls.js';
import { registerMediaRoute } from './emulator-media.js';
import { registerMessageRoute } from './emulator-messages.js';
import { registerPhoneNumberRoute } from './emulator-phone-numbers.js';
import { registerSettingsControl } from './emulator-settings.js';
import { createEmulatorState, type EmulatorState } from './emulator-state.js';
import { registerTemplateControls, registerTemplateRoutes } from './emulator-templates.js';
import { registerUserPreferenceControl, unixSeconds } from './emulator-user-preferences.js';
import { createWebhookSender, envelope } from './emulator-webhook-sender.js';

export type EmulatorOptions = {
  callbackUrl: string | null;
  appSecret: string | null;
  latencyMs?: number;
  logLevel?: string;
};

export function createEmulator(opts: EmulatorOptions): { app: FastifyInstance; state: EmulatorState } {
  const state = createEmulatorState();
  state.latencyMs = opts.latencyMs ?? 0;
  const app = Fastify({
    logger: { level: opts.logLevel ?? 'warn' },
    bodyLimit: 110 * 1024 * 1024,
    forceCloseConnections: true,
  });

  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const sender = createWebhookSender(app, state, { callbackUrl: opts.callbackUrl, appSecret: opts.appSecret });
  const postWebhook = sender.post;

  // ---- the Cloud API ----
  registerMessageRoute(app, state, sender);

  registerMediaRoute(app, state);

  registerPhoneNumberRoute(app, state);
  registerTemplateRoutes(app, state);

  // ---- control API ----
  registerStateControls(app, state, sender.queue);
  registerSettingsControl(app, state, sender.target);
  registerTemplateControls(app, state, (wabaId, payload) =>
    postWebhook(payload, [...state.numbers].find(([, n]) => n.wabaId === wabaId && n.callbackUrl)?.[0]),
  );
  registerUserPreferenceControl(app, (pn, value) => postWebhook(envelope(state, pn, value, 'user_preferences'), pn));
  /** Posts an inbound message webhook, as if a user had written to the number (docs/emulator.md). */
  app.post<{
    Body: { phoneNumberId: string; from?: string; text?: string; name?: string; type?: string; contextId?: string } & {
      timestamp?: number | string;
      fromUserId?: string;
      previousUserId?: string;
    };
  }>('/__emulator/inbound', async (request) => {
    const b = request.body;
    const id = newWamid();
    const from = b.from?.replace(/^\+/, '');
    const message: Record<string, unknown> = { ...(from ? { from } : {}), id, timestamp: unixSeconds(b.timestamp) };
    message.type = b.previousUserId ? 'system' : (b.type ?? 'text');
    if (b.fromUserId) message.from_user_id = b.fromUserId;
    if (message.type === 'text') message.text = { body: b.text ?? '' };
    if (b.previousUserId)
      message.system = { body: 'User changed', type: 'user_changed_user_id', previous_user_id: b.previousUserId };
    if (b.contextId) message.context = { from: '15550000000', id: b.contextId };
    const contact = { profile: { name: b.name ?? 'Emulated User' }, ...(from ? { wa_id: from } : {}) };
    const status = await postWebhook(
      envelope(state, b.phoneNumberId, {
        contacts: [{ ...contact, ...(b.fromUserId ? { user_id: b.fromUserId } : {}) }],
        messages: [message],
      }),
      b.phoneNumberId,
    );
    return { id, delivered: status === 200 };
  });

  return { app, state };
}
