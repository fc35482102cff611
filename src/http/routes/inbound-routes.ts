// Inbound: sender lookups (every plan), the inbox (Pro), inbox filters and forwarding rules (Pro).
// Who may read or change what (plan, key scope, sandbox, the numbers' country) is the sender
// and settings services' rule.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchema } from 'fastify';

import type { SettingsService } from '../../inbound/settings-service.js';
import { MAX_FILTER_NUMBERS } from '../../inbound/settings-service.js';
import type { SenderService } from '../../senders/sender-service.js';
import { Timestamp, Uuid } from '../../shared/schemas.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { NoContent } from '../openapi/route-docs.js';
import {
  ForwardingRule,
  ForwardingRuleList,
  InboundMessage,
  InboundMessagePage,
  InboxFilter,
  Sender,
  SenderList,
} from '../schemas/inbound.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';
import type { KeyAudit } from './key-audit.js';
import { parseTimestamp } from './read-scope.js';

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

const accountParam = Type.Object({ accountId: Uuid() });
const ruleParams = Type.Object({ id: Uuid() });
const common = { security: [{ apiKey: [] }], tags: ['inbound'] };
const senderScope: ErrorCode[] = ['key_scope_violation', 'account_not_found', 'chat_account_required'];
const inboxGate: ErrorCode[] = ['feature_not_available', ...senderScope];
const ruleGate: ErrorCode[] = ['feature_not_available', 'key_scope_insufficient', 'forwarding_rule_not_found'];

const schemas = {
  sender: {
    ...common,
    operationId: 'getSender',
    response: { 200: Sender },
    'x-errors': senderScope,
    summary: 'Has this number written to the account?',
    params: Type.Object({ phone: Phone }),
    querystring: Type.Object({ chatAccountId: Type.Optional(Uuid()) }, { additionalProperties: false }),
  },
  lookup: {
    ...common,
    operationId: 'lookupSenders',
    response: { 200: SenderList },
    'x-errors': senderScope,
    'x-examples': {
      lookup: {
        summary: 'Three numbers in any accepted spelling',
        value: { phones: ['+15551234567', '15551234568', '(555) 123-4569'] },
      },
    },
    summary: 'Up to 200 numbers at once',
    body: Type.Object(
      { phones: Type.Array(Phone, { minItems: 1, maxItems: 200 }), chatAccountId: Type.Optional(Uuid()) },
      { additionalProperties: false },
    ),
  },
  inbox: {
    ...common,
    operationId: 'listInboundMessages',
    response: { 200: InboundMessagePage },
    'x-errors': ['invalid_cursor', ...inboxGate],
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
  inboundMessage: {
    ...common,
    operationId: 'getInboundMessage',
    summary: 'One inbound message of the inbox (plan Pro), with its content',
    params: Type.Object({ id: Uuid() }),
    response: { 200: InboundMessage },
    'x-errors': ['inbound_message_not_found', ...inboxGate],
  },
  getFilter: {
    ...common,
    operationId: 'getInboxFilter',
    summary: 'The inbox filter of an account (Pro)',
    params: accountParam,
    response: { 200: InboxFilter },
    'x-errors': [...inboxGate, 'sandbox_not_supported'],
  },
  setFilter: {
    ...common,
    operationId: 'setInboxFilter',
    response: { 200: InboxFilter },
    'x-errors': [...inboxGate, 'sandbox_not_supported'],
    'x-examples': {
      whitelist: {
        summary: 'Keep only messages from these numbers',
        value: { mode: 'whitelist', numbers: ['+15551234567', '+15557654321'] },
      },
      off: { summary: 'Keep every message', value: { mode: 'off' } },
    },
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
    operationId: 'createForwardingRule',
    response: { 201: ForwardingRule },
    'x-errors': [...ruleGate, 'account_not_found', 'limit_reached'],
    'x-examples': {
      contains: {
        summary: 'Forward inbound messages that mention an order',
        value: {
          name: 'Orders',
          condition: { type: 'contains', pattern: 'order' },
          destination: { type: 'http', url: 'https://example.com/chatgate/orders' },
        },
      },
    },
    summary: 'Create a forwarding rule (Pro)',
    body: Type.Object(
      { ...RuleFields, condition: Condition, destination: Destination },
      { additionalProperties: false },
    ),
  },
  listRules: {
    ...common,
    operationId: 'listForwardingRules',
    summary: 'Forwarding rules (Pro)',
    response: { 200: ForwardingRuleList },
    'x-errors': ruleGate,
  },
  getRule: {
    ...common,
    operationId: 'getForwardingRule',
    summary: 'One forwarding rule',
    params: ruleParams,
    response: { 200: ForwardingRule },
    'x-errors': ruleGate,
  },
  updateRule: {
    ...common,
    operationId: 'updateForwardingRule',
    response: { 200: ForwardingRule },
    'x-errors': [...ruleGate, 'account_not_found'],
    'x-examples': {
      pause: { summary: 'Pause a rule', value: { isActive: false } },
      pattern: {
        summary: 'Match a prefix, case-sensitive',
        value: { condition: { type: 'starts_with', pattern: 'ORDER', caseSensitive: true } },
      },
    },
    summary: 'Change a forwarding rule',
    params: ruleParams,
    body: Type.Object(
      { ...RuleFields, condition: Type.Optional(Type.Partial(Condition)), destination: Type.Optional(Destination) },
      { additionalProperties: false },
    ),
  },
  deleteRule: {
    ...common,
    operationId: 'deleteForwardingRule',
    summary: 'Delete a forwarding rule',
    params: ruleParams,
    response: { 204: NoContent },
    'x-errors': ruleGate,
  },
} satisfies Record<string, FastifySchema>;

type Deps = { senders: SenderService; settings: SettingsService; audited: KeyAudit };

/** A change to the inbox's settings, in the customer's audit log by the key. */
const audited = (deps: Deps, request: FastifyRequest, action: string, target: string) =>
  deps.audited(request, action, target);

/** A forwarding rule in the audit log's words: its name and where it forwards. */
const ruleWords = (rule: { name: string | null; destination: { url: string } }) =>
  `${rule.name || '(no name)'} → ${rule.destination.url}`;

function registerSenderRoutes(app: Server, deps: Deps) {
  app.get('/inbound-senders/:phone', { schema: schemas.sender }, async (request) =>
    deps.senders.lookupOne(callerOf(request), request.params.phone, request.query.chatAccountId),
  );

  app.post('/inbound-senders/lookup', { schema: schemas.lookup }, async (request) => ({
    senders: await deps.senders.lookupMany(callerOf(request), request.body.phones, request.body.chatAccountId),
  }));

  app.get('/inbound-messages', { schema: schemas.inbox }, async (request) => {
    const q = request.query;
    return deps.senders.inbox(callerOf(request), {
      chatAccountId: q.chatAccountId,
      from: q.from,
      since: parseTimestamp(q.since, 'since'),
      until: parseTimestamp(q.until, 'until'),
      limit: q.limit ?? 50,
      cursor: q.cursor,
    });
  });

  app.get('/inbound-messages/:id', { schema: schemas.inboundMessage }, async (request) =>
    deps.senders.inboundMessage(callerOf(request), request.params.id),
  );
}

function registerInboxFilterRoutes(app: Server, deps: Deps) {
  app.get('/chat-accounts/:accountId/inbox-filter', { schema: schemas.getFilter }, async (request) =>
    deps.settings.getFilter(callerOf(request), request.params.accountId),
  );

  app.put('/chat-accounts/:accountId/inbox-filter', { schema: schemas.setFilter }, async (request) => {
    const { accountId } = request.params;
    const numbers = request.body.numbers ?? [];
    const saved = await deps.settings.setFilter(callerOf(request), accountId, request.body.mode, numbers);
    const account = callerOf(request).tenant.accounts.find((a) => a.id === accountId);
    const name = account ? `${account.displayName} (${account.phoneNumber})` : accountId;
    await audited(deps, request, 'inbox.filter_save', `${name}: ${request.body.mode}, ${numbers.length} number(s)`);
    return saved;
  });
}

function registerForwardingRuleRoutes(app: Server, deps: Deps) {
  app.post('/forwarding-rules', { schema: schemas.createRule }, async (request, reply) => {
    const rule = await deps.settings.createRule(callerOf(request), request.body);
    await audited(deps, request, 'inbox.rule_create', ruleWords(rule));
    return reply.code(201).send(rule);
  });
  app.get('/forwarding-rules', { schema: schemas.listRules }, async (request) => ({
    forwardingRules: await deps.settings.listRules(callerOf(request)),
  }));
  app.get('/forwarding-rules/:id', { schema: schemas.getRule }, async (request) =>
    deps.settings.getRule(callerOf(request), request.params.id),
  );
  app.patch('/forwarding-rules/:id', { schema: schemas.updateRule }, async (request) => {
    const rule = await deps.settings.updateRule(callerOf(request), request.params.id, request.body as never);
    await audited(deps, request, 'inbox.rule_update', ruleWords(rule));
    return rule;
  });
  app.delete('/forwarding-rules/:id', { schema: schemas.deleteRule }, async (request, reply) => {
    const rule = await deps.settings.getRule(callerOf(request), request.params.id);
    await deps.settings.deleteRule(callerOf(request), request.params.id);
    await audited(deps, request, 'inbox.rule_delete', ruleWords(rule));
    return reply.code(204).send();
  });
}

export function registerInboundRoutes(app: Server, deps: Deps) {
  registerSenderRoutes(app, deps);
  registerInboxFilterRoutes(app, deps);
  registerForwardingRuleRoutes(app, deps);
}
