// Phone-number read: GET /{version}/{phone-number-id}. The bearer token is checked as for sends (a
// registered number's own token only), and `lookup` failure rules apply, so a test can make a
// token check fail, then pass.
import type { FastifyInstance } from 'fastify';

import { bearerToken, injectedBody, refuseToken, sleep, tokenRefused } from './emulator-common.js';
import { answerMediaLookup } from './emulator-inbound-media.js';
import { type EmulatorState, inMaintenance } from './emulator-state.js';
import { graphError } from './graph-error.js';

export function registerPhoneNumberRoute(app: FastifyInstance, state: EmulatorState): void {
  app.get<{ Params: { version: string; id: string } }>('/:version/:id', async (request, reply) => {
    // The same path reads a received file's media id (emulator-inbound-media.ts).
    const media = answerMediaLookup(state, request, reply, request.params.id);
    if (media) return media;
    const n = state.numbers.get(request.params.id);
    const token = bearerToken(request);
    state.lookups.push({ phoneNumberId: request.params.id, at: Date.now() });
    if (state.latencyMs > 0) await sleep(state.latencyMs);
    if (tokenRefused(token, n)) return refuseToken(reply);
    const rule = state.takeRule(request.params.id, 'lookup');
    if (rule?.hang) {
      await sleep(120_000);
      return reply.code(504).send();
    }
    if (rule?.httpStatus !== undefined || rule?.error)
      return reply.code(rule.httpStatus ?? 400).send(injectedBody(rule));
    // During a throughput upgrade the number answers no API request (the provider's words).
    if (inMaintenance(n)) return reply.code(400).send(graphError(131057, 'Account in maintenance mode'));
    if (!n) return reply.code(400).send(graphError(100, 'Unsupported get request. Object does not exist'));
    return {
      id: request.params.id,
      display_phone_number: n.displayPhoneNumber ?? '+1 555-000-0000',
      verified_name: n.verifiedName ?? 'Emulated Business',
      quality_rating: 'GREEN',
      platform_type: 'CLOUD_API',
      throughput: { level: (n.throughputMps ?? 80) > 80 ? 'HIGH' : 'STANDARD' },
      status: 'CONNECTED',
    };
  });
}
