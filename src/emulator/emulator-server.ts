// `chatgate emulator`: a local stand-in for the provider's Cloud API, for development, demos,
// tests and benchmarks. It speaks the same protocol (paths, bearer tokens, Graph error envelope,
// wamid ids, signed webhooks) and adds a control API under /__emulator. Each route (or group of
// routes) is registered by its own file; this one composes them around one state and one sender.
import Fastify, { type FastifyInstance } from 'fastify';

import { registerStateControls } from './emulator-controls.js';
import { registerInboundControl } from './emulator-inbound.js';
import { registerInboundMediaRoutes } from './emulator-inbound-media.js';
import { registerMediaRoute } from './emulator-media.js';
import { registerMessageRoute } from './emulator-messages.js';
import { registerPhoneNumberRoute } from './emulator-phone-numbers.js';
import { registerPortfolioControls } from './emulator-portfolios.js';
import { registerSendCounts } from './emulator-send-counts.js';
import { registerSettingsControl } from './emulator-settings.js';
import { registerSignupRoutes } from './emulator-signup.js';
import { createEmulatorState, type EmulatorState } from './emulator-state.js';
import { registerTemplateControls, registerTemplateRoutes } from './emulator-templates.js';
import { registerUserPreferenceControl } from './emulator-user-preferences.js';
import { registerVersionCheck } from './emulator-versions.js';
import { createWebhookSender, envelope } from './emulator-webhook-sender.js';

export type EmulatorOptions = {
  callbackUrl: string | null;
  appSecret: string | null;
  latencyMs?: number;
  logLevel?: string;
  /** The emulator's clock for Graph API version expiry (default: the real one). */
  now?: () => Date;
};

export function createEmulator(opts: EmulatorOptions): { app: FastifyInstance; state: EmulatorState } {
  const state = createEmulatorState();
  state.latencyMs = opts.latencyMs ?? 0;
  const app = Fastify({
    logger: { level: opts.logLevel ?? 'warn' },
    bodyLimit: 110 * 1024 * 1024,
    forceCloseConnections: true,
  });

  registerVersionCheck(app, opts.now ?? (() => new Date()));

  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const sender = createWebhookSender(app, state, { callbackUrl: opts.callbackUrl, appSecret: opts.appSecret });

  // ---- the Cloud API ----
  registerMessageRoute(app, state, sender);
  registerMediaRoute(app, state);
  registerInboundMediaRoutes(app, state);
  registerPhoneNumberRoute(app, state);
  registerTemplateRoutes(app, state);
  registerSignupRoutes(app, state, opts.appSecret);

  // ---- control API ----
  registerStateControls(app, state, sender.queue);
  registerSendCounts(app, state);
  registerSettingsControl(app, state, sender.target);
  registerTemplateControls(app, state, (wabaId, payload) =>
    sender.post(payload, [...state.numbers].find(([, n]) => n.wabaId === wabaId && n.callbackUrl)?.[0]),
  );
  registerUserPreferenceControl(app, (pn, value) => sender.post(envelope(state, pn, value, 'user_preferences'), pn));
  registerInboundControl(app, state, sender);
  registerPortfolioControls(app, state, sender);

  return { app, state };
}
