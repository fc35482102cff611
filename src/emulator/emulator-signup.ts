// Embedded Signup as the provider plays it (decision 0076, docs/provider-protocol-2026.md
// "Embedded Signup"): a control that stands for the customer finishing the flow in the provider's
// popup (a code, a WABA and a number, the number's business token), a stand-in for the JS SDK that
// a page can load (it gives the page that code and the session's ids, as the real SDK does), and
// the three server-to-server steps: the code's exchange (GET /oauth/access_token: once, with the
// app's secret), the app's subscription to the WABA (POST /{waba-id}/subscribed_apps) and the
// number's registration (POST /{phone-number-id}/register with a six-digit PIN).
import crypto from 'node:crypto';

import type { FastifyInstance } from 'fastify';

import { bearerToken, refuseToken } from './emulator-common.js';
import type { EmulatedSignup, EmulatorState } from './emulator-state.js';
import { graphError } from './graph-error.js';

type SessionInput = {
  wabaId?: string;
  phoneNumberId?: string;
  displayPhoneNumber?: string;
  verifiedName?: string;
  pin?: string | null;
};

const digits = (n: number) =>
  Array.from({ length: n }, (_, i) => String(crypto.randomInt(i === 0 ? 1 : 0, 10))).join('');

/** A finished flow: the number exists at the provider with the business token, not yet registered. */
function newSession(state: EmulatorState, input: SessionInput): EmulatedSignup {
  const s: EmulatedSignup = {
    code: `AQ${crypto.randomBytes(24).toString('base64url')}`,
    wabaId: input.wabaId ?? digits(15),
    phoneNumberId: input.phoneNumberId ?? digits(15),
    businessId: digits(15),
    accessToken: `EAAG${crypto.randomBytes(24).toString('base64url')}`,
    pin: input.pin ?? null,
    exchanged: false,
    subscribed: false,
    registeredPin: null,
  };
  state.signups.set(s.code, s);
  state.numbers.set(s.phoneNumberId, {
    ...state.numbers.get(s.phoneNumberId),
    accessToken: s.accessToken,
    wabaId: s.wabaId,
    displayPhoneNumber: input.displayPhoneNumber ?? `+1 555-${digits(3)}-${digits(4)}`,
    verifiedName: input.verifiedName ?? 'Signed Up Business',
  });
  state.managementTokens.set(s.wabaId, s.accessToken);
  return s;
}

/**
 * The JS SDK stand-in: `FB.init`, and `FB.login` that posts the session's `WA_EMBEDDED_SIGNUP`
 * message event (v4's FINISH with phone_number_id, waba_id, business_id) to the page, then calls
 * back with `authResponse.code`, as the real SDK does after its popup. Each load is a new session.
 */
function sdkScript(s: EmulatedSignup): string {
  const session = JSON.stringify({
    type: 'WA_EMBEDDED_SIGNUP',
    event: 'FINISH',
    data: { phone_number_id: s.phoneNumberId, waba_id: s.wabaId, business_id: s.businessId },
  });
  return `(function () {
  var session = ${JSON.stringify(session)};
  var code = ${JSON.stringify(s.code)};
  window.FB = {
    init: function (opts) { window.FB.initOptions = opts; },
    login: function (callback, opts) {
      window.FB.loginOptions = opts;
      var data = JSON.parse(session);
      data.version = (opts && opts.extras && opts.extras.version) || '';
      window.postMessage(JSON.stringify(data), '*');
      setTimeout(function () { callback({ status: 'connected', authResponse: { code: code } }); }, 10);
    },
  };
  if (typeof window.fbAsyncInit === 'function') window.fbAsyncInit();
})();
`;
}

export function registerSignupRoutes(app: FastifyInstance, state: EmulatorState, appSecret: string | null): void {
  // ---- control: the customer finished the flow ----
  app.post<{ Body: SessionInput }>('/__emulator/signup', async (request) => {
    const s = newSession(state, request.body ?? {});
    return { code: s.code, wabaId: s.wabaId, phoneNumberId: s.phoneNumberId, businessId: s.businessId };
  });
  app.get<{ Params: { code: string } }>('/__emulator/signup/:code', async (request, reply) => {
    const s = state.signups.get(request.params.code);
    if (!s) return reply.code(404).send({ error: 'no such session' });
    const { accessToken: _token, ...rest } = s;
    return rest;
  });
  app.get<{ Querystring: SessionInput }>('/__emulator/sdk.js', async (request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('access-control-allow-origin', '*')
      .send(sdkScript(newSession(state, request.query ?? {}))),
  );

  // ---- the Graph API ----
  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/:version/oauth/access_token',
    async (request, reply) => {
      const q = request.query ?? {};
      if (!q.client_id || !q.client_secret || !q.code)
        return reply.code(400).send(graphError(100, 'Missing client_id, client_secret or code'));
      if (appSecret !== null && q.client_secret !== appSecret)
        return reply.code(400).send(graphError(1, 'Error validating client secret.'));
      const s = state.signups.get(q.code);
      if (!s) return reply.code(400).send(graphError(100, 'Invalid verification code format.'));
      if (s.exchanged) return reply.code(400).send(graphError(100, 'This authorization code has been used.', 36009));
      s.exchanged = true;
      return { access_token: s.accessToken, token_type: 'bearer' };
    },
  );

  app.post<{ Params: { id: string } }>('/:version/:id/subscribed_apps', async (request, reply) => {
    const s = [...state.signups.values()].find((x) => x.wabaId === request.params.id && x.exchanged);
    const expected = s?.accessToken ?? state.managementTokens.get(request.params.id);
    if (!expected || bearerToken(request) !== expected) return refuseToken(reply);
    if (s) s.subscribed = true;
    return { success: true };
  });

  app.post<{ Params: { id: string }; Body: { messaging_product?: unknown; pin?: unknown } }>(
    '/:version/:id/register',
    async (request, reply) => {
      const n = state.numbers.get(request.params.id);
      if (!n?.accessToken || bearerToken(request) !== n.accessToken) return refuseToken(reply);
      const body = request.body ?? {};
      if (body.messaging_product !== 'whatsapp')
        return reply.code(400).send(graphError(100, 'The parameter messaging_product is required.'));
      if (typeof body.pin !== 'string' || !/^\d{6}$/.test(body.pin))
        return reply.code(400).send(graphError(100, 'Param pin must be 6 digits'));
      const s = [...state.signups.values()].find((x) => x.phoneNumberId === request.params.id);
      if (s?.pin !== null && s?.pin !== undefined && s.pin !== body.pin)
        return reply.code(400).send(graphError(133005, 'Two step verification PIN Mismatch'));
      if (s) s.registeredPin = body.pin;
      return { success: true };
    },
  );
}
