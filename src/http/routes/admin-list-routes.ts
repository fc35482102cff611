// The operator's read-only lists (customers, a customer's accounts) and a customer's usage, guarded
// by the operator hook of registerAdminRoutes (admin-routes.ts), which registers them.
import { Type } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';

import type { AccountList } from '../../accounts/account-list.js';
import type { CustomerQueries } from '../../customers/customer-store.js';
import { PLANS } from '../../plans/plans.js';
import { MONTH_PATTERN, PageQuery, Uuid } from '../../shared/schemas.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { CustomerPage, OperatorChatAccountPage } from '../schemas/operator.js';
import { CustomerUsage } from '../schemas/usage.js';
import type { Server } from '../server.js';

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const IdParam = Type.Object({ id: Uuid() });
const tags = ['operator'];
const security = [{ operator: [] }];
const notFound: ErrorCode[] = ['not_found'];

const schemas = {
  listCustomers: {
    tags,
    security,
    operationId: 'listCustomers',
    summary: 'Customers, newest first, with cursor pagination; q searches names',
    response: { 200: CustomerPage },
    'x-errors': ['invalid_cursor'],
    querystring: Type.Object(
      {
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        plan: Type.Optional(literals(PLANS)),
        ...PageQuery,
      },
      { additionalProperties: false },
    ),
  },
  usage: {
    tags,
    security,
    operationId: 'getCustomerUsage',
    summary: "A customer's quota use in one UTC month (default this one)",
    response: { 200: CustomerUsage },
    'x-errors': notFound,
    params: IdParam,
    querystring: Type.Object(
      { month: Type.Optional(Type.String({ pattern: MONTH_PATTERN })) },
      { additionalProperties: false },
    ),
  },
  listAccounts: {
    tags,
    security,
    operationId: 'listCustomerChatAccounts',
    summary: "A customer's chat accounts, newest first, with cursor pagination",
    response: { 200: OperatorChatAccountPage },
    'x-errors': [...notFound, 'invalid_cursor'],
    params: IdParam,
    querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
  },
} satisfies Record<string, FastifySchema>;

/** YYYY-MM (already checked by the schema), or this UTC month. */
function monthOf(given: string | undefined): { year: number; month: number } {
  if (given) return { year: Number(given.slice(0, 4)), month: Number(given.slice(5, 7)) };
  const now = new Date();
  return { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
}

/** The operator's read-only lists (customers, a customer's accounts) and a customer's usage. */
export function registerOperatorLists(
  app: Server,
  deps: { customerQueries: CustomerQueries; accountList: AccountList },
) {
  app.get('/admin/customers', { schema: schemas.listCustomers }, async (request) =>
    deps.customerQueries.list({ ...request.query, limit: request.query.limit ?? 50 }),
  );

  app.get('/admin/customers/:id/usage', { schema: schemas.usage }, async (request) =>
    deps.customerQueries.usage(request.params.id, monthOf(request.query.month)),
  );

  app.get('/admin/customers/:id/chat-accounts', { schema: schemas.listAccounts }, async (request) =>
    deps.accountList.list(request.params.id, { ...request.query, limit: request.query.limit ?? 50 }),
  );
}
