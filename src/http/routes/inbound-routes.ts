// Inbound: sender lookups (every plan), the inbox (Pro), inbox filters and forwarding rules (Pro).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import type { Principal, Tenant } from '../../auth/directory.js';
import type { SettingsService } from '../../inbound/settings-service.js';
import { MAX_FILTER_NUMBERS } from '../../inbound/settings-service.js';
import { requireFeature } from '../../plans/plans.js';
import { normalizePhone } from '../../senders/phone.js';
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

export function registerInboundRoutes(app: Server, deps: { senders: SenderService; settings: SettingsService }) {
  const common = { security: [{ apiKey: [] }] };

  async function proCaller(request: FastifyRequest): Promise<Caller> {
    const c = callerOf(request);
    requireFeature(c.tenant.plan, 'inbox');
    return c;
  }
  const normalize = (tenant: Tenant, phone: string, path: string) => {
    const e164 = normalizePhone(phone, tenant.defaultCountry);
    if (!e164)
      throw errors.validation([
        {
          path,
          message: 'is not a phone number (E.164, international digits, or a national number of your default country)',
        },
      ]);
    return e164;
  };

  app.get(
    '/inbound-senders/:phone',
    {
      schema: {
        ...common,
        tags: ['inbound'],
        summary: 'Has this number written to the account?',
        params: Type.Object({ phone: Phone }),
        querystring: Type.Object({ chatAccountId: Type.Optional(Uuid()) }, { additionalProperties: false }),
      },
    },
    async (request) => {
      const { principal, tenant } = callerOf(request);
      const account = resolveLookupAccount(principal, tenant, request.query.chatAccountId);
      const phone = normalize(tenant, request.params.phone, 'phone');
      const [sender] = await deps.senders.lookup(tenant.customerId, account.id, [phone], principal.sandbox);
      return sender;
    },
  );

  app.post(
    '/inbound-senders/lookup',
    {
      schema: {
        ...common,
        tags: ['inbound'],
        summary: 'Up to 200 numbers at once',
        body: Type.Object(
          { phones: Type.Array(Phone, { minItems: 1, maxItems: 200 }), chatAccountId: Type.Optional(Uuid()) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const { principal, tenant } = callerOf(request);
      const problems: { path: string; message: string }[] = [];
      const phones = request.body.phones.map((p, i) => {
        const e164 = normalizePhone(p, tenant.defaultCountry);
        if (!e164)
          problems.push({
            path: `phones.${i}`,
            message:
              'is not a phone number (E.164, international digits, or a national number of your default country)',
          });
        return e164 ?? '';
      });
      if (problems.length > 0) throw errors.validation(problems);
      const account = resolveLookupAccount(principal, tenant, request.body.chatAccountId);
      return { senders: await deps.senders.lookup(tenant.customerId, account.id, phones, principal.sandbox) };
    },
  );

  app.get(
    '/inbound-messages',
    {
      schema: {
        ...common,
        tags: ['inbound'],
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
    },
    async (request) => {
      const { principal, tenant } = await proCaller(request);
      const q = request.query;
      const scope = resolveReadScope(principal, tenant, q.chatAccountId);
      const from = q.from !== undefined ? normalize(tenant, q.from, 'from') : undefined;
      const page = {
        from,
        since: parseTimestamp(q.since, 'since'),
        until: parseTimestamp(q.until, 'until'),
        limit: q.limit ?? 50,
        cursor: q.cursor,
      };
      if (principal.sandbox) {
        if (q.cursor !== undefined)
          await deps.senders.inbox(
            { customerId: tenant.customerId, accountId: scope.accountId },
            { ...page, limit: 1 },
          ); // validates the cursor
        return { inboundMessages: [], nextCursor: null };
      }
      return deps.senders.inbox(scope, page);
    },
  );

  const accountParam = Type.Object({ accountId: Uuid() });
  const filterAccount = (principal: Principal, tenant: Tenant, id: string) =>
    resolveLookupAccount(principal, tenant, id).id;

  app.get(
    '/chat-accounts/:accountId/inbox-filter',
    { schema: { ...common, tags: ['inbound'], summary: 'The inbox filter of an account (Pro)', params: accountParam } },
    async (request) => {
      const { principal, tenant } = await proCaller(request);
      return deps.settings.getFilter(tenant.customerId, filterAccount(principal, tenant, request.params.accountId));
    },
  );

  app.put(
    '/chat-accounts/:accountId/inbox-filter',
    {
      schema: {
        ...common,
        tags: ['inbound'],
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
    },
    async (request) => {
      const { principal, tenant } = await proCaller(request);
      const accountId = filterAccount(principal, tenant, request.params.accountId);
      const problems: { path: string; message: string }[] = [];
      const numbers = (request.body.numbers ?? []).map((p, i) => {
        const e164 = normalizePhone(p, tenant.defaultCountry);
        if (!e164) problems.push({ path: `numbers.${i}`, message: 'is not a phone number' });
        return e164 ?? '';
      });
      if (problems.length > 0) throw errors.validation(problems);
      return deps.settings.setFilter(tenant.customerId, accountId, request.body.mode, numbers);
    },
  );

  const ruleParams = Type.Object({ id: Uuid() });
  const ruleCaller = async (request: FastifyRequest) => {
    const c = await proCaller(request);
    if (c.principal.scopeAccountId !== null) throw errors.keyScopeInsufficient();
    return c;
  };
  const ownAccount = (tenant: Tenant, id: string | null | undefined) => {
    if (id && !tenant.accounts.some((a) => a.id === id.toLowerCase())) throw errors.accountNotFound();
  };

  app.post(
    '/forwarding-rules',
    {
      schema: {
        ...common,
        tags: ['inbound'],
        summary: 'Create a forwarding rule (Pro)',
        body: Type.Object(
          { ...RuleFields, condition: Condition, destination: Destination },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { tenant } = await ruleCaller(request);
      ownAccount(tenant, request.body.chatAccountId);
      return reply.code(201).send(await deps.settings.createRule(tenant.customerId, request.body));
    },
  );
  app.get(
    '/forwarding-rules',
    { schema: { ...common, tags: ['inbound'], summary: 'Forwarding rules (Pro)' } },
    async (request) => ({
      forwardingRules: await deps.settings.listRules((await ruleCaller(request)).tenant.customerId),
    }),
  );
  app.get(
    '/forwarding-rules/:id',
    { schema: { ...common, tags: ['inbound'], summary: 'One forwarding rule', params: ruleParams } },
    async (request) => deps.settings.getRule((await ruleCaller(request)).tenant.customerId, request.params.id),
  );
  app.patch(
    '/forwarding-rules/:id',
    {
      schema: {
        ...common,
        tags: ['inbound'],
        summary: 'Change a forwarding rule',
        params: ruleParams,
        body: Type.Object(
          { ...RuleFields, condition: Type.Optional(Type.Partial(Condition)), destination: Type.Optional(Destination) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      const { tenant } = await ruleCaller(request);
      ownAccount(tenant, request.body.chatAccountId);
      return deps.settings.updateRule(tenant.customerId, request.params.id, request.body as never);
    },
  );
  app.delete(
    '/forwarding-rules/:id',
    { schema: { ...common, tags: ['inbound'], summary: 'Delete a forwarding rule', params: ruleParams } },
    async (request, reply) => {
      await deps.settings.deleteRule((await ruleCaller(request)).tenant.customerId, request.params.id);
      return reply.code(204).send();
    },
  );
}
