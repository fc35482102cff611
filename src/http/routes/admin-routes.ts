// The operator API (contract in docs/architecture.md), guarded by Authorization: Bearer <ADMIN_TOKEN>.
import { type Static, Type } from '@sinclair/typebox';
import { isSupportedCountry } from 'libphonenumber-js';

import type { AccountAdmin } from '../../accounts/account-admin.js';
import type { AccountList } from '../../accounts/account-list.js';
import type { CustomerService } from '../../customers/customer-service.js';
import type { CustomerQueries } from '../../customers/customer-store.js';
import type { InboundService } from '../../inbound/inbound-service.js';
import type { KeyService } from '../../keys/key-service.js';
import { PLANS } from '../../plans/plans.js';
import { providerVersionReport } from '../../provider/api-versions.js';
import type { Rekey } from '../../secrets/rekey.js';
import { errors } from '../../shared/errors.js';
import { normalizePhone } from '../../shared/phone.js';
import { COUNTRY_PATTERN, E164, MONTH_PATTERN, PageQuery, Uuid } from '../../shared/schemas.js';
import {
  ACCOUNT_STATUSES,
  ACCOUNT_TYPES,
  SEND_POLICY_MODES,
  TEMPLATE_ACCESS,
  WABA_VERIFICATIONS,
} from '../../shared/vocab.js';
import type { OperatorAuth } from '../operator-auth.js';
import type { Server } from '../server.js';

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

const schemas = {
  createCustomer: {
    tags,
    security,
    summary: 'Create a customer',
    body: Type.Object(
      { name: Name, plan: literals(PLANS), defaultCountry: Type.Optional(Country) },
      { additionalProperties: false },
    ),
  },
  getCustomer: { tags, security, summary: "A customer with this month's usage", params: IdParam },
  updateCustomer: {
    tags,
    security,
    summary: "Change a customer's plan, default country or name",
    params: IdParam,
    body: Type.Object(
      { name: Type.Optional(Name), plan: Type.Optional(literals(PLANS)), defaultCountry: Type.Optional(Country) },
      { additionalProperties: false },
    ),
  },
  createAccount: {
    tags,
    security,
    summary: 'Link a chat account',
    params: IdParam,
    querystring: VerifyQuery,
    body: Type.Object(AccountFields, { additionalProperties: false }),
  },
  updateAccount: {
    tags,
    security,
    summary: 'Change a chat account',
    params: IdParam,
    querystring: VerifyQuery,
    body: Type.Partial(Type.Object(AccountFields), { additionalProperties: false }),
  },
  createKey: {
    tags,
    security,
    summary: 'Create an API key (the full key is shown once, in this answer)',
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
  listKeys: { tags, security, summary: "A customer's keys, masked", params: IdParam },
  ingest: {
    tags,
    security,
    summary: 'Ingest an inbound message received by a connector',
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
  revokeKey: { tags, security, summary: 'Revoke a key, at once and for good', params: IdParam },
  listCustomers: {
    tags,
    security,
    summary: 'Customers, newest first, with cursor pagination; q searches names',
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
    summary: "A customer's quota use in one UTC month (default this one)",
    params: IdParam,
    querystring: Type.Object(
      { month: Type.Optional(Type.String({ pattern: MONTH_PATTERN })) },
      { additionalProperties: false },
    ),
  },
  provider: {
    tags,
    security,
    summary:
      'The Graph API version this process calls (PROVIDER_API_VERSION) with its expiry, and every version this release knows',
  },
  rekey: {
    tags,
    security,
    summary: "Re-seal every secret at rest under this process's ENCRYPTION_KEY (key rotation); repeatable",
  },
  listAccounts: {
    tags,
    security,
    summary: "A customer's chat accounts, newest first, with cursor pagination",
    params: IdParam,
    querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
  },
};

/** YYYY-MM (already checked by the schema), or this UTC month. */
function monthOf(given: string | undefined): { year: number; month: number } {
  if (given) return { year: Number(given.slice(0, 4)), month: Number(given.slice(5, 7)) };
  const now = new Date();
  return { year: now.getUTCFullYear(), month: now.getUTCMonth() + 1 };
}

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
    /** PROVIDER_API_VERSION, shown by GET /admin/provider. */
    providerApiVersion: string;
  },
) {
  app.addHook('onRequest', deps.operatorAuth);

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
    return deps.customers.update(request.params.id, request.body);
  });

  app.post('/admin/customers/:id/chat-accounts', { schema: schemas.createAccount }, async (request, reply) =>
    reply.code(201).send(await deps.accounts.create(request.params.id, request.body, request.query)),
  );

  app.patch('/admin/chat-accounts/:id', { schema: schemas.updateAccount }, async (request) =>
    deps.accounts.update(request.params.id, request.body, request.query),
  );

  app.post('/admin/customers/:id/api-keys', { schema: schemas.createKey }, async (request, reply) =>
    reply.code(201).send(await deps.keys.create(request.params.id, request.body ?? {})),
  );

  app.get('/admin/customers/:id/api-keys', { schema: schemas.listKeys }, async (request) => ({
    apiKeys: await deps.keys.list(request.params.id),
  }));

  // Inbound messages of a DIRECT channel, posted by its connector (also usable for OFFICIAL ones).
  app.post('/admin/chat-accounts/:id/inbound', { schema: schemas.ingest }, async (request, reply) =>
    reply.code(202).send(await ingestFromConnector(deps.inbound, request.params.id, request.body)),
  );

  app.delete('/admin/api-keys/:id', { schema: schemas.revokeKey }, async (request, reply) => {
    await deps.keys.revoke(request.params.id);
    return reply.code(204).send();
  });

  // Key rotation: re-seals every secret under this process's ENCRYPTION_KEY (docs/security.md).
  app.post('/admin/encryption/rekey', { schema: schemas.rekey }, async () => deps.rekey.run());

  app.get('/admin/provider', { schema: schemas.provider }, async () => providerVersionReport(deps.providerApiVersion));
}

/** The operator's read-only lists (customers, a customer's accounts) and a customer's usage. */
function registerOperatorLists(app: Server, deps: { customerQueries: CustomerQueries; accountList: AccountList }) {
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
