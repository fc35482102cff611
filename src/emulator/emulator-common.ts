// Small pieces the emulated provider routes share: ids, the bearer token check, injected failures.
import crypto from 'node:crypto';

import type { FastifyReply, FastifyRequest } from 'fastify';

import type { FailureRule } from './emulator-state.js';
import { graphError } from './graph-error.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A provider-style numeric id (15 digits; randomInt's range stops at 2^48). */
export const numericId = () => String(crypto.randomInt(1e14, 2 ** 48 - 1));
export const newWamid = () => `wamid.${crypto.randomBytes(24).toString('base64url')}`;

/** The bearer token of a request ('' when there is none). */
export const bearerToken = (request: FastifyRequest) => (request.headers.authorization ?? '').replace(/^Bearer /, '');

/** True when the token is missing, or is not the registered number's own token. */
export const tokenRefused = (token: string, number: { accessToken?: string } | undefined) =>
  !token || (number?.accessToken !== undefined && token !== number.accessToken);

/** The provider's answer to a missing or wrong access token. */
export const refuseToken = (reply: FastifyReply) =>
  reply.code(401).send(graphError(190, 'Error validating access token: Session has expired or the token is invalid.'));

/** The body a failure rule answers with: its Graph error, or a bare `{ error: 'injected' }`. */
export const injectedBody = (rule: FailureRule) =>
  rule.error
    ? graphError(rule.error.code, rule.error.message ?? 'Injected failure', rule.error.subcode)
    : { error: 'injected' };
