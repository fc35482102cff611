// The API's side of the customer's audit log: a change made with an API key is recorded with the
// key in words (its masked form and name, as the portal's key list shows it) as the actor.
import type { FastifyRequest } from 'fastify';

import { type KeyService, keyWords } from '../../keys/key-service.js';
import type { AuditLog } from '../../portal/audit-log.js';
import { callerOf } from '../server.js';

/** Records `action` on `target` (words) by the request's API key, under its customer. */
export type KeyAudit = (request: FastifyRequest, action: string, target: string) => Promise<void>;

export function createKeyAudit(audit: AuditLog, keys: Pick<KeyService, 'list'>): KeyAudit {
  return async (request, action, target) => {
    const { principal } = callerOf(request);
    const key = principal.keyId
      ? (await keys.list(principal.customerId)).find((k) => k.id === principal.keyId)
      : undefined;
    const actor = key ? `API key ${keyWords(key)}` : 'an API key';
    await audit.record({ customerId: principal.customerId, actor }, action, target, request.ip);
  };
}
