// The operator API (contract in docs/architecture.md), guarded by Authorization: Bearer <ADMIN_TOKEN>.
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyRequest, FastifySchema } from 'fastify';
import { isSupportedCountry } from 'libphonenumber-js';

import type { AccountAdmin } from '../../accounts/account-admin.js';
import type { AccountList } from '../../accounts/account-list.js';
import type { CustomerService } from '../../customers/customer-service.js';
import type { CustomerQueries } from '../../customers/customer-store.js';
import type { InboundService } from '../../inbound/inbound-service.js';
import { type KeyService, keyWords } from '../../keys/key-service.js';
import { PLANS } from '../../plans/plans.js';
import type { AuditLog } from '../../portal/audit-log.js';
import { providerVersionReport } from '../../provider/api-versions.js';
import type { Rekey } from '../../secrets/rekey.js';
import { errors } from '../../shared/errors.js';
import { normalizePhone } from '../../shared/phone.js';
import { COUNTRY_PATTERN, E164, Uuid } from '../../shared/schemas.js';
import {
  ACCOUNT_STATUSES,
  ACCOUNT_TYPES,
  SEND_POLICY_MODES,
  TEMPLATE_ACCESS,
  WABA_VERIFICATIONS,
} from '../../shared/vocab.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { NoContent } from '../openapi/route-docs.js';
import type { OperatorAuth } from '../operator-auth.js';
import {
  ApiKey,
  ApiKeyList,
  Customer,
  InboundIngested,
  OperatorChatAccount,
  ProviderSettings,
  RekeyResult,
} from '../schemas/operator.js';
import type { Server } from '../server.js';
import { registerOperatorLists } from './admin-list-routes.js';

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Country = Type.Union([Type.String({ pattern: COUNTRY_PATTERN }), Type.Null()]);
const Secret = Type.String({ minLength: 1, maxLength: 4096 });
const ProviderId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' });

const Official = Type.Object(
  {
    phoneNumberId: Type.Optional(ProviderId),
    wabaId: Type.Optional(ProviderId),
    accessToken: Type.Optional(Secret),
    appSecret: Type.Optional(Type.Union([Secret, Type.Null()])),
    integrationId: Type.Optional(Type.Union([ProviderId, Type.Null()])),
    managementToken: Type.Optional(Type.Union([Secret, Type.Null()])),
    wabaVerification: Type.Optional(literals(WABA_VERIFICATIONS)),
    verifiedName: Type.Optional(Type.Union([Name, Type.Null()])),
  },
  { additionalProperties: false },
);

const AccountFields = {
  type: literals(ACCOUNT_TYPES),
  phoneNumber: E164(),
  displayName: Name,
  status: Type.Optional(literals(ACCOUNT_STATUSES)),
  lastErrorCode: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()])),
  official: Type.Optional(Official),
  sendPolicy: Type.Optional(
    Type.Object(
      { mode: literals(SEND_POLICY_MODES), testRecipients: Type.Optional(Type.Array(E164(), { maxItems: 1000 })) },
      { additionalProperties: false },
    ),
  ),
  throughputMps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  portfolioId: Type.Optional(
    Type.Union([ProviderId, Type.Null()], {
      description:
        "The business portfolio this account's number belongs to (decision 0044): accounts with the same portfolioId share one messaging limit (unique recipients of business-initiated conversations in a moving 24 hours). null (default): the account alone. Use the provider's business portfolio id, or any label of yours.",
    }),
  ),
  messagingLimit: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 100_000_000 }), Type.Null()], {
      description:
        "The portfolio's messaging limit, for every account of the portfolio: 250, 2000, 10000, 100000 as the provider's tiers, or a lower cap of yours; null: unlimited. Until the provider's webhook (business_capability_update, phone_number_quality_update) or this field sets one, the provider's default 250 is counted but not enforced; the latest of the two wins.",
    }),
  ),
  marketingMessagesApi: Type.Optional(
    Type.Boolean({
      description:
        "true: MARKETING templates go over the provider's Marketing Messages API (POST /<phone-number-id>/marketing_messages), the rest over /messages; falls back to /messages while the provider says the account is not onboarded (131055). Default false.",
    }),
  ),
};

const IdParam = Type.Object({ id: Uuid() });

/** `?verify=true`: check an OFFICIAL account's access token with the provider before linking it. */
const VerifyQuery = Type.Object(
  {
    verify: Type.Optional(
      Type.Boolean({
        description:
          'true: before saving, the provider reads the phone number with the access token (as the account prober does). A rejected token is refused (400 validation_error on official.accessToken); when the provider cannot be asked, the account is linked and the answer says so in credentialCheck.',
      }),
    ),
  },
  { additionalProperties: false },
);

function checkCountry(country: string | null | undefined) {
  if (country && !isSupportedCountry(country)) {
    throw errors.validation([{ path: 'defaultCountry', message: 'is not a country with known phone numbering' }]);
  }
}

const tags = ['operator'];
const security = [{ operator: [] }];
const notFound: ErrorCode[] = ['not_found'];

const schemas = {
  createCustomer: {
    tags,
    security,
    operationId: 'createCustomer',
    summary: 'Create a customer',
    response: { 201: Customer },
    'x-examples': {
      customer: {
        summary: 'A customer on plan Starter',
        value: { name: 'Acme Ltd', plan: 'starter', defaultCountry: 'US' },
      },
    },
    body: Type.Object(
      { name: Name, plan: literals(PLANS), defaultCountry: Type.Optional(Country) },
      { additionalProperties: false },
    ),
  },
  getCustomer: {
    tags,
    security,
    operationId: 'getCustomer',
    summary: "A customer with this month's usage",
    params: IdParam,
    response: { 200: Customer },
    'x-errors': notFound,
  },
  updateCustomer: {
    tags,
    security,
    operationId: 'updateCustomer',
    summary: "Change a customer's plan, default country, name or self-serve linking",
    response: { 200: Customer },
    'x-errors': notFound,
    'x-examples': { plan: { summary: 'Move to plan Pro', value: { plan: 'pro' } } },
    params: IdParam,
    body: Type.Object(
      {
        name: Type.Optional(Name),
        plan: Type.Optional(literals(PLANS)),
        defaultCountry: Type.Optional(Country),
        embeddedSignup: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      },
      { additionalProperties: false },
    ),
  },
  createAccount: {
    tags,
    security,
    operationId: 'linkChatAccount',
    summary: 'Link a chat account',
    response: { 201: OperatorChatAccount },
    'x-errors': [...notFound, 'already_exists', 'limit_reached'],
    'x-examples': {
      official: {
        summary: 'An official account (its credentials are checked with the provider)',
        value: {
          type: 'OFFICIAL',
          phoneNumber: '+15551230000',
          displayName: 'Acme Support',
          official: { phoneNumberId: '109876543210', wabaId: '205432109876', accessToken: '<provider access token>' },
        },
      },
    },
    params: IdParam,
    querystring: VerifyQuery,
    body: Type.Object(AccountFields, { additionalProperties: false }),
  },
  updateAccount: {
    tags,
    security,
    operationId: 'updateChatAccount',
    summary: 'Change a chat account',
    response: { 200: OperatorChatAccount },
    'x-errors': [...notFound, 'already_exists'],
    'x-examples': {
      rename: { summary: 'Rename an account', value: { displayName: 'Acme Sales' } },
      token: { summary: 'A new access token', value: { official: { accessToken: '<provider access token>' } } },
    },
    params: IdParam,
    querystring: VerifyQuery,
    body: Type.Partial(Type.Object(AccountFields), { additionalProperties: false }),
  },
  createKey: {
    tags,
    security,
    operationId: 'createApiKey',
    summary: 'Create an API key (the full key is shown once, in this answer)',
    response: { 201: ApiKey },
    'x-errors': [...notFound, 'limit_reached', 'invalid_chat_account'],
    'x-examples': {
      live: { summary: 'A live key for every account', value: { name: 'Backend' } },
      sandbox: { summary: 'A sandbox key', value: { sandbox: true, name: 'Tests' } },
    },
    params: IdParam,
    body: Type.Object(
      {
        sandbox: Type.Optional(Type.Boolean()),
        chatAccountId: Type.Optional(Type.Union([Uuid(), Type.Null()])),
        templateAccess: Type.Optional(literals(TEMPLATE_ACCESS)),
        name: Type.Optional(Type.Union([Name, Type.Null()])),
      },
      { additionalProperties: false },
    ),
  },
  listKeys: {
    tags,
    security,
    operationId: 'listApiKeys',
    summary: "A customer's keys, masked",
    params: IdParam,
    response: { 200: ApiKeyList },
    'x-errors': notFound,
  },
  ingest: {
    tags,
    security,
    operationId: 'ingestInboundMessage',
    summary: 'Ingest an inbound message received by a connector',
    response: { 202: InboundIngested },
    'x-errors': notFound,
    'x-examples': {
      text: {
        summary: 'A text a number sent to the account',
        value: { providerMessageId: 'wamid.HBgLMTU1NTEyMzQ1NjcVAgASGBQzQUI', from: '+15551234567', text: 'Hello' },
      },
    },
    params: IdParam,
    body: Type.Object(
      {
        providerMessageId: Type.String({ minLength: 1, maxLength: 200 }),
        from: Type.String({ minLength: 1, maxLength: 40 }),
        fromDisplayName: Type.Optional(Type.String({ maxLength: 200 })),
        messageType: Type.Optional(Type.String({ minLength: 1, maxLength: 40, pattern: '^[a-z_]+$' })),
        text: Type.Optional(Type.Union([Type.String({ maxLength: 10000 }), Type.Null()])),
        receivedAt: Type.Optional(Type.String({ format: 'date-time' })),
        replyToProviderMessageId: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
      },
      { additionalProperties: false },
    ),
  },
  revokeKey: {
    tags,
    security,
    operationId: 'revokeApiKey',
    summary: 'Revoke a key, at once and for good',
    params: IdParam,
    response: { 204: NoContent },
    'x-errors': notFound,
  },
  provider: {
    tags,
    security,
    operationId: 'getProviderSettings',
    summary:
      'The Graph API version this process calls (PROVIDER_API_VERSION) with its expiry, and every version this release knows',
    response: { 200: ProviderSettings },
  },
  rekey: {
    tags,
    security,
    operationId: 'rekey',
    summary: "Re-seal every secret at rest under this process's ENCRYPTION_KEY (key rotation); repeatable",
    response: { 200: RekeyResult },
    'x-errors': ['key_mismatch'],
  },
} satisfies Record<string, FastifySchema>;

/** A connector's inbound message, ingested like a provider's (sender aggregate, inbox, events). */
async function ingestFromConnector(
  inbound: InboundService,
  accountId: string,
  b: Static<typeof schemas.ingest.body>,
): Promise<{ ingested: boolean; duplicate: boolean }> {
  const account = await inbound.account({ id: accountId });
  if (!account) throw errors.notFound('chat account');
  const from = normalizePhone(b.from, null);
  if (!from) throw errors.validation([{ path: 'from', message: 'must be an international phone number' }]);
  const receivedAt = b.receivedAt ? new Date(b.receivedAt) : new Date();
  if (Number.isNaN(receivedAt.getTime()) || receivedAt.getUTCFullYear() < 2000 || receivedAt.getUTCFullYear() > 9999) {
    throw errors.validation([{ path: 'receivedAt', message: 'must be a recent ISO 8601 timestamp' }]);
  }
  const result = await inbound.ingest([
    {
      account,
      message: {
        phoneNumberId: '',
        providerMessageId: b.providerMessageId,
        fromPhone: from,
        userId: null,
        fromDisplayName: b.fromDisplayName ?? '',
        messageType: b.messageType ?? 'text',
        text: b.text ?? null,
        displayText: b.text ?? null,
        contextId: b.replyToProviderMessageId ?? null,
        receivedAt,
      },
    },
  ]);
  if (result.failed > 0) throw new Error('inbound ingestion failed');
  return { ingested: result.ingested === 1, duplicate: result.duplicates === 1 };
}

export function registerAdminRoutes(
  app: Server,
  deps: {
    operatorAuth: OperatorAuth;
    customers: CustomerService;
    customerQueries: CustomerQueries;
    accounts: AccountAdmin;
    accountList: AccountList;
    keys: KeyService;
    inbound: InboundService;
    rekey: Rekey;
    /** The customer's audit log: the operator's changes to their keys and plan are in it. */
    audit: AuditLog;
    /** PROVIDER_API_VERSION, shown by GET /admin/provider. */
    providerApiVersion: string;
  },
) {
  app.addHook('onRequest', deps.operatorAuth);
  const byOperator = (request: FastifyRequest, customerId: string, action: string, target: string) =>
    deps.audit.record({ customerId, actor: 'operator' }, action, target, request.ip);

  app.post('/admin/customers', { schema: schemas.createCustomer }, async (request, reply) => {
    checkCountry(request.body.defaultCountry);
    return reply.code(201).send(await deps.customers.create(request.body));
  });

  app.get('/admin/customers/:id', { schema: schemas.getCustomer }, async (request) =>
    deps.customers.get(request.params.id),
  );

  registerOperatorLists(app, deps);

  app.patch('/admin/customers/:id', { schema: schemas.updateCustomer }, async (request) => {
    checkCountry(request.body.defaultCountry);
    const updated = await deps.customers.update(request.params.id, request.body);
    const changed = Object.entries(request.body).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
    await byOperator(request, request.params.id, 'customer.update', changed.join(', '));
    return updated;
  });

  app.post('/admin/customers/:id/chat-accounts', { schema: schemas.createAccount }, async (request, reply) =>
    reply.code(201).send(await deps.accounts.create(request.params.id, request.body, request.query)),
  );

  app.patch('/admin/chat-accounts/:id', { schema: schemas.updateAccount }, async (request) =>
    deps.accounts.update(request.params.id, request.body, request.query),
  );

  app.post('/admin/customers/:id/api-keys', { schema: schemas.createKey }, async (request, reply) => {
    const created = await deps.keys.create(request.params.id, request.body ?? {});
    await byOperator(request, request.params.id, 'key.create', keyWords(created));
    return reply.code(201).send(created);
  });

  app.get('/admin/customers/:id/api-keys', { schema: schemas.listKeys }, async (request) => ({
    apiKeys: await deps.keys.list(request.params.id),
  }));

  // Inbound messages of a DIRECT channel, posted by its connector (also usable for OFFICIAL ones).
  app.post('/admin/chat-accounts/:id/inbound', { schema: schemas.ingest }, async (request, reply) =>
    reply.code(202).send(await ingestFromConnector(deps.inbound, request.params.id, request.body)),
  );

  app.delete('/admin/api-keys/:id', { schema: schemas.revokeKey }, async (request, reply) => {
    const { customerId } = await deps.keys.revoke(request.params.id);
    const key = (await deps.keys.list(customerId)).find((k) => k.id === request.params.id);
    await byOperator(request, customerId, 'key.revoke', key ? keyWords(key) : 'an API key');
    return reply.code(204).send();
  });

  // Key rotation: re-seals every secret under this process's ENCRYPTION_KEY (docs/security.md).
  app.post('/admin/encryption/rekey', { schema: schemas.rekey }, async () => deps.rekey.run());

  app.get('/admin/provider', { schema: schemas.provider }, async () => providerVersionReport(deps.providerApiVersion));
}
