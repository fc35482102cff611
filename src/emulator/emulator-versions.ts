// Graph API versions on the emulated Cloud API: a request whose path starts with a version the
// provider has not released, or one past its expiry (the table in src/provider/api-versions.ts), is
// refused with the Graph error envelope, so a service configured with such a version fails clearly
// in development and tests. The provider documents that calls to an expired version are served by
// the oldest available one instead; refusing is the stricter, visible stand-in (docs/provider-protocol-2026.md).
import type { FastifyInstance } from 'fastify';

import { apiVersionStatus } from '../provider/api-versions.js';
import { graphError } from './graph-error.js';

/** The error code of the refusal (the provider's code for calling a deprecated API version). */
export const UNSUPPORTED_VERSION_CODE = 2635;

/** One hook for every Cloud API route (`/<version>/…`); the control API (`/__emulator/…`) is not versioned. */
export function registerVersionCheck(app: FastifyInstance, now: () => Date) {
  app.addHook('onRequest', async (request, reply) => {
    const version = request.url.split(/[/?#]/)[1] ?? '';
    if (!/^v\d/.test(version)) return;
    const status = apiVersionStatus(version, now());
    if (status.state === 'unknown')
      return reply.code(400).send(graphError(UNSUPPORTED_VERSION_CODE, `Unknown Graph API version ${version}`));
    if (status.state === 'expired')
      return reply
        .code(400)
        .send(
          graphError(
            UNSUPPORTED_VERSION_CODE,
            `You are calling a deprecated version of the Graph API: ${version} expired on ${status.expires}. Please update to the latest version`,
          ),
        );
  });
}
