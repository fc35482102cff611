// Inbound: sender lookups (every plan), the inbox (Pro), inbox filters and forwarding rules (Pro).
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import type { Tenant } from '../../auth/directory.js';
import type { SettingsService } from '../../inbound/settings-service.js';
import { MAX_FILTER_NUMBERS } from '../../inbound/settings-service.js';
import { requireFeature } from '../../plans/plans.js';
import { normalizePhone } from '../../shared/phone.js';
import { resolveLookupAccount, type SenderService } from '../../senders/sender-service.js';
import { errors } from '../../shared/errors.js';
import { Timestamp, Uuid } from '../../shared/schemas.js';
import type { Server } from '../server.js';
import { type Caller, callerOf } from '../server.js';
import { parseTimestamp, resolveReadScope } from './read-scope.js';

const Phone = Type.String({ minLength: 1, maxLength: 40 });
const Condition = Type.Object(
  {
    type: Type.Union([Type.Literal('contains'), Type.Literal('starts_with'), Type.Literal('regex')]),
    pattern: Type.String({ minLength: 1, maxLength: 500 }),
    caseSensitive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const Destination = Type.Object(
  { type: Type.Literal('http'), url: Type.String({ minLength: 1, maxLength: 2048 }) },
  { additionalProperties: false },
);
const RuleFields = {
  name: Type.Optional(Type.String({ maxLength: 200 })),
  chatAccountId: Type.Optional(Type.Union([Uuid(), Type.Null()])),
  isActive: Type.Optional(Type.Boolean()),
};

const PHONE_PROBLEM =
  'is not a phone number (E.164, international digits, or a national number of your default country)';
const accountParam = Type.Object({ accountId: Uuid() });
const ruleParams = Type.Object({ id: Uuid() });
const common = { security: [{ apiKey: [] }], tags: ['inbound'] };

const schemas = {
  sender: {
    ...common,
    summary: 'Has this number written to the account?',
    params: Type.Object({ phone: Phone }),
    querystring: Type.Object({ chatAccountId: Type.Optional(Uuid()) }, { additionalProperties: false }),
  },
  lookup: {
    ...common,
    summary: 'Up to 200 numbers at once',
    body: Type.Object(
      { phones: Type.Array(Phone, { minItems: 1, maxItems: 200 }), chatAccountId: Type.Optional(Uuid()) },
      { additionalProperties: false },
    ),
  },
  inbox: {
    ...common,
    summary: 'The inbox (plan Pro), newest first',
    querystring: Type.Object(
      {
        from: Type.Optional(Phone),
        chatAccountId: Type.Optional(Uuid()),
        since: Type.Optional(Timestamp()),
        until: Type.Optional(Timestamp()),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        cursor: Type.Optional(Type.String({ maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  },
  getFilter: { ...common, summary: 'The inbox filter of an account (Pro)', params: accountParam },
  setFilter: {
    ...common,
    summary: 'Set the inbox filter: off, whitelist or blacklist of numbers (Pro)',
    params: accountParam,
    body: Type.Object(
      {
        mode: Type.Union([Type.Literal('off'), Type.Literal('whitelist'), Type.Literal('blacklist')]),
        numbers: Type.Optional(Type.Array(Phone, { maxItems: MAX_FILTER_NUMBERS })),
      },
      { additionalProperties: false },
    ),
  },
  createRule: {
    ...common,
    summary: 'Create a forwarding rule (Pro)',
    body: Type.Object(
      { ...RuleFields, condition: Condition, destination: Destination },
      { additionalProperties: false },
    ),
  },
  listRules: { ...common, summary: 'Forwarding rules (Pro)' },
  getRule: { ...common, summary: 'One forwarding rule', params: ruleParams },
  updateRule: {
    ...common,
    summary: 'Change a forwarding rule',
    params: ruleParams,
    body: Type.Object(
      { ...RuleFields, condition: Type.Optional(Type.Partial(Condition)), destination: Type.Optional(Destination) },
      { additionalProperties: false },
    ),
  },
  deleteRule: { ...common, summary: 'Delete a forwarding rule', params: ruleParams },
};

type Deps = { senders: SenderService; settings: SettingsService };

/** The caller, once its plan has the inbox (filters and forwarding rules too). */
function proCallerOf(request: FastifyRequest): Caller {
  const c = callerOf(request);
  requireFeature(c.tenant.plan, 'inbox');
  return c;
}

/** Forwarding rules belong to the customer: not for a key scoped to one account. */
function ruleCallerOf(request: FastifyRequest): Caller {
  const c = proCallerOf(request);
  if (c.principal.scopeAccountId !== null) throw errors.keyScopeInsufficient();
  return c;
}

function normalize(tenant: Tenant, phone: string, path: string): string {
  const e164 = normalizePhone(phone, tenant.defaultCountry);
  if (!e164) throw errors.validation([{ path, message: PHONE_PROBLEM }]);
  return e164;
}

/** Every number of a list in E.164, or one validation_error naming each one that is not a number. */
function normalizeAll(tenant: Tenant, phones: string[], path: string, message: string): string[] {
  const problems: { path: string; message: string }[] = [];
  const e164s = phones.map((p, i) => {
    const e164 = normalizePhone(p, tenant.defaultCountry);
    if (!e164) problems.push({ path: `${path}.${i}`, message });
    return e164 ?? '';
  });
  if (problems.length > 0) throw errors.validation(problems);
  return e164s;
}

const filterAccount = ({ principal, tenant }: Caller, id: string) => resolveLookupAccount(principal, tenant, id).id;

const ownAccount = (tenant: Tenant, id: string | null | undefined) => {
  if (id && !tenant.accounts.some((a) => a.id === id.toLowerCase())) throw errors.accountNotFound();
};

/** The inbox page a caller may read: a sandbox key's is always empty (its cursor is still checked). */
async function readInbox(
  senders: SenderService,
  { principal, tenant }: Caller,
  q: Static<typeof schemas.inbox.querystring>,
) {
  const scope = resolveReadScope(principal, tenant, q.chatAccountId);
  const page = {
    from: q.from !== undefined ? normalize(tenant, q.from, 'from') : undefined,
    since: parseTimestamp(q.since, 'since'),
    until: parseTimestamp(q.until, 'until'),
    limit: q.limit ?? 50,
    cursor: q.cursor,
  };
  if (!principal.sandbox) return senders.inbox(scope, page);
  if (q.cursor !== undefined)
    await senders.inbox({ customerId: tenant.customerId, accountId: scope.accountId }, { ...page, limit: 1 });
  return { inboundMessages: [], nextCursor: null };
}

function registerSenderRoutes(app: Server, deps: Deps) {
  app.get('/inbound-senders/:phone', { schema: schemas.sender }, async (request) => {
    const { principal, tenant } = callerOf(request);
    const account = resolveLookupAccount(principal, tenant, request.query.chatAccountId);
    const phone = normalize(tenant, request.params.phone, 'phone');
    const [sender] = await deps.senders.lookup(tenant.customerId, account.id, [phone], principal.sandbox);
    return sender;
  });

  app.post('/inbound-senders/lookup', { schema: schemas.lookup }, async (request) => {
    const { principal, tenant } = callerOf(request);
    const phones = normalizeAll(tenant, request.body.phones, 'phones', PHONE_PROBLEM);
    const account = resolveLookupAccount(principal, tenant, request.body.chatAccountId);
    return { senders: await deps.senders.lookup(tenant.customerId, account.id, phones, principal.sandbox) };
  });

  app.get('/inbound-messages', { schema: schemas.inbox }, async (request) =>
    readInbox(deps.senders, proCallerOf(request), request.query),
  );
}

function registerInboxFilterRoutes(app: Server, deps: Deps) {
  app.get('/chat-accounts/:accountId/inbox-filter', { schema: schemas.getFilter }, async (request) => {
    const caller = proCallerOf(request);
    return deps.settings.getFilter(caller.tenant.customerId, filterAccount(caller, request.params.accountId));
  });

  app.put('/chat-accounts/:accountId/inbox-filter', { schema: schemas.setFilter }, async (request) => {
    const caller = proCallerOf(request);
    const accountId = filterAccount(caller, request.params.accountId);
    const numbers = normalizeAll(caller.tenant, request.body.numbers ?? [], 'numbers', 'is not a phone number');
    return deps.settings.setFilter(caller.tenant.customerId, accountId, request.body.mode, numbers);
  });
}

function registerForwardingRuleRoutes(app: Server, deps: Deps) {
  app.post('/forwarding-rules', { schema: schemas.createRule }, async (request, reply) => {
    const { tenant } = ruleCallerOf(request);
    ownAccount(tenant, request.body.chatAccountId);
    return reply.code(201).send(await deps.settings.createRule(tenant.customerId, request.body));
  });
  app.get('/forwarding-rules', { schema: schemas.listRules }, async (request) => ({
    forwardingRules: await deps.settings.listRules(ruleCallerOf(request).tenant.customerId),
  }));
  app.get('/forwarding-rules/:id', { schema: schemas.getRule }, async (request) =>
    deps.settings.getRule(ruleCallerOf(request).tenant.customerId, request.params.id),
  );
  app.patch('/forwarding-rules/:id', { schema: schemas.updateRule }, async (request) => {
    const { tenant } = ruleCallerOf(request);
    ownAccount(tenant, request.body.chatAccountId);
    return deps.settings.updateRule(tenant.customerId, request.params.id, request.body as never);
  });
  app.delete('/forwarding-rules/:id', { schema: schemas.deleteRule }, async (request, reply) => {
    await deps.settings.deleteRule(ruleCallerOf(request).tenant.customerId, request.params.id);
    return reply.code(204).send();
  });
}

export function registerInboundRoutes(app: Server, deps: Deps) {
  registerSenderRoutes(app, deps);
  registerInboxFilterRoutes(app, deps);
  registerForwardingRuleRoutes(app, deps);
}
