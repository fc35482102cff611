// Suppression lists (decision 0014): a chat account's opted-out numbers, and its opt-out keywords.
// Which account, which numbers and who may change them is the suppression service's rule.
import { Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

import { Uuid } from '../../shared/schemas.js';
import { MAX_KEYWORD_LENGTH, MAX_OPT_OUT_KEYWORDS } from '../../suppressions/opt-out-keywords.js';
import type { SuppressionService } from '../../suppressions/suppression-service.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { NoContent } from '../openapi/route-docs.js';
import { OptOutKeywords, Suppression, SuppressionPage } from '../schemas/suppressions.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const Phone = Type.String({
  minLength: 1,
  maxLength: 160,
  description: 'A number in any accepted spelling, or a business-scoped user id (an entry kept under the id).',
});
const accountParam = Type.Object({ accountId: Uuid() });
const common = { security: [{ apiKey: [] }], tags: ['suppressions'] };
const readScope: ErrorCode[] = ['key_scope_violation', 'account_not_found'];
const changeScope: ErrorCode[] = [...readScope, 'sandbox_not_supported'];

const schemas = {
  list: {
    ...common,
    operationId: 'listSuppressions',
    response: { 200: SuppressionPage },
    'x-errors': ['invalid_cursor', ...readScope],
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
    operationId: 'addSuppression',
    summary: 'Put a number on the suppression list',
    description:
      "Puts a number on the account's suppression list (`201`); a number already listed answers `200` with its entry unchanged. Broadcast messages and MARKETING templates to a listed number fail with `RECIPIENT_OPTED_OUT`, without a provider call and with their quota given back.",
    response: { 200: Suppression, 201: Suppression },
    'x-errors': changeScope,
    'x-examples': {
      add: { summary: 'A number to suppress', value: { phone: '+15551234567', reason: 'Asked by phone' } },
    },
    params: accountParam,
    body: Type.Object(
      { phone: Phone, reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
      { additionalProperties: false },
    ),
  },
  remove: {
    ...common,
    operationId: 'removeSuppression',
    summary: 'Take a number off the suppression list',
    description: 'Takes a number (any spelling, `+` URL-encoded as `%2B`) off the list, whatever put it there.',
    response: { 204: NoContent },
    'x-errors': [...readScope, 'suppression_not_found', 'sandbox_not_supported'],
    params: Type.Object({ accountId: Uuid(), phone: Phone }),
  },
  getKeywords: {
    ...common,
    operationId: 'getOptOutKeywords',
    summary: "The account's opt-out keywords",
    params: accountParam,
    response: { 200: OptOutKeywords },
    'x-errors': changeScope,
  },
  setKeywords: {
    ...common,
    operationId: 'setOptOutKeywords',
    summary: "Replace the account's opt-out keywords",
    description:
      'Replaces the keywords (default `STOP`, `UNSUBSCRIBE`, `STOPP`, `ARRET`, `BAJA`). An inbound text that is one of them, whole, trimmed and in any case, puts its sender on the list; `[]` turns keywords off.',
    response: { 200: OptOutKeywords },
    'x-errors': changeScope,
    'x-examples': {
      keywords: { summary: 'Your own keywords', value: { keywords: ['STOP', 'UNSUBSCRIBE', 'QUIT'] } },
      off: { summary: 'No keywords', value: { keywords: [] } },
    },
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
} satisfies Record<string, FastifySchema>;

export function registerSuppressionRoutes(app: Server, deps: { suppressions: SuppressionService }) {
  const base = '/chat-accounts/:accountId/suppressions';
  app.get(base, { schema: schemas.list }, async (request) => {
    const q = request.query;
    return deps.suppressions.list(callerOf(request), request.params.accountId, {
      limit: q.limit ?? 50,
      cursor: q.cursor,
    });
  });

  app.post(base, { schema: schemas.add }, async (request, reply) => {
    const { created, suppression } = await deps.suppressions.add(
      callerOf(request),
      request.params.accountId,
      request.body.phone,
      request.body.reason,
    );
    return reply.code(created ? 201 : 200).send(suppression);
  });

  app.delete(`${base}/:phone`, { schema: schemas.remove }, async (request, reply) => {
    await deps.suppressions.remove(callerOf(request), request.params.accountId, request.params.phone);
    return reply.code(204).send();
  });

  app.get('/chat-accounts/:accountId/opt-out-keywords', { schema: schemas.getKeywords }, async (request) =>
    deps.suppressions.getKeywords(callerOf(request), request.params.accountId),
  );

  app.put('/chat-accounts/:accountId/opt-out-keywords', { schema: schemas.setKeywords }, async (request) =>
    deps.suppressions.setKeywords(callerOf(request), request.params.accountId, request.body.keywords),
  );
}
