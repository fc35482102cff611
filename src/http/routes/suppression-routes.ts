// Suppression lists (decision 0014): a chat account's opted-out numbers, and its opt-out keywords.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import { normalizePhone } from '../../shared/phone.js';
import { resolveLookupAccount } from '../../senders/sender-service.js';
import { errors } from '../../shared/errors.js';
import { Uuid } from '../../shared/schemas.js';
import { MAX_KEYWORD_LENGTH, MAX_OPT_OUT_KEYWORDS } from '../../suppressions/opt-out-keywords.js';
import type { SuppressionService } from '../../suppressions/suppression-service.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const Phone = Type.String({ minLength: 1, maxLength: 40 });
const PHONE_PROBLEM =
  'is not a phone number (E.164, international digits, or a national number of your default country)';
const accountParam = Type.Object({ accountId: Uuid() });
const common = { security: [{ apiKey: [] }], tags: ['suppressions'] };

const schemas = {
  list: {
    ...common,
    summary: "The account's suppression list, newest first",
    params: accountParam,
    querystring: Type.Object(
      {
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  },
  add: {
    ...common,
    summary: 'Put a number on the suppression list',
    params: accountParam,
    body: Type.Object(
      { phone: Phone, reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
      { additionalProperties: false },
    ),
  },
  remove: {
    ...common,
    summary: 'Take a number off the suppression list',
    params: Type.Object({ accountId: Uuid(), phone: Phone }),
  },
  getKeywords: { ...common, summary: "The account's opt-out keywords", params: accountParam },
  setKeywords: {
    ...common,
    summary: "Replace the account's opt-out keywords",
    params: accountParam,
    body: Type.Object(
      {
        keywords: Type.Array(Type.String({ minLength: 1, maxLength: MAX_KEYWORD_LENGTH }), {
          maxItems: MAX_OPT_OUT_KEYWORDS,
        }),
      },
      { additionalProperties: false },
    ),
  },
};

/** The caller's customer and the account named in the path (404 when not the caller's, 403 out of scope). */
function accountOf(request: FastifyRequest, accountId: string) {
  const { principal, tenant } = callerOf(request);
  return { tenant, accountId: resolveLookupAccount(principal, tenant, accountId).id };
}

function phoneOf(defaultCountry: string | null, phone: string, path: string): string {
  const e164 = normalizePhone(phone, defaultCountry);
  if (!e164) throw errors.validation([{ path, message: PHONE_PROBLEM }]);
  return e164;
}

export function registerSuppressionRoutes(app: Server, deps: { suppressions: SuppressionService }) {
  const base = '/chat-accounts/:accountId/suppressions';
  app.get(base, { schema: schemas.list }, async (request) => {
    const { tenant, accountId } = accountOf(request, request.params.accountId);
    const q = request.query;
    return deps.suppressions.list(tenant.customerId, accountId, { limit: q.limit ?? 50, cursor: q.cursor });
  });

  app.post(base, { schema: schemas.add }, async (request, reply) => {
    const { tenant, accountId } = accountOf(request, request.params.accountId);
    const phone = phoneOf(tenant.defaultCountry, request.body.phone, 'phone');
    const { created, suppression } = await deps.suppressions.add(
      tenant.customerId,
      accountId,
      phone,
      request.body.reason,
    );
    return reply.code(created ? 201 : 200).send(suppression);
  });

  app.delete(`${base}/:phone`, { schema: schemas.remove }, async (request, reply) => {
    const { tenant, accountId } = accountOf(request, request.params.accountId);
    await deps.suppressions.remove(
      tenant.customerId,
      accountId,
      phoneOf(tenant.defaultCountry, request.params.phone, 'phone'),
    );
    return reply.code(204).send();
  });

  app.get('/chat-accounts/:accountId/opt-out-keywords', { schema: schemas.getKeywords }, async (request) =>
    deps.suppressions.getKeywords(accountOf(request, request.params.accountId).accountId),
  );

  app.put('/chat-accounts/:accountId/opt-out-keywords', { schema: schemas.setKeywords }, async (request) => {
    const { tenant, accountId } = accountOf(request, request.params.accountId);
    return deps.suppressions.setKeywords(tenant.customerId, accountId, request.body.keywords);
  });
}
