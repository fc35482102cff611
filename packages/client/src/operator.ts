// The operator's client: one method per operation of the operator API (`/admin/...`, the token
// ADMIN_TOKEN as `Authorization: Bearer`), on the same transport as ChatGate: the same retries of
// the calls that are safe to repeat, errors, per-request options and list iterators.
import { iterateAll, paginate, type RequestOptions, seg, Transport, type TransportOptions } from './transport.js';
import type {
  ApiKey,
  CreateApiKeyRequest,
  CreateCustomerRequest,
  CreatePortalUserRequest,
  Customer,
  CustomerPage,
  CustomerUsage,
  GetCustomerUsageQuery,
  InboundIngested,
  IngestInboundMessageRequest,
  LinkChatAccountRequest,
  ListCustomerChatAccountsQuery,
  ListCustomersQuery,
  OperatorChatAccount,
  OperatorChatAccountPage,
  PortalUser,
  PortalUserInvited,
  ProviderSettings,
  RekeyResult,
  Schemas,
  UpdateChatAccountRequest,
  UpdateCustomerRequest,
  VerifyQuery,
} from './types.js';

export type ChatGateOperatorOptions = TransportOptions & {
  /** The service's ADMIN_TOKEN, sent as `Authorization: Bearer <token>`. */
  adminToken: string;
};

export class ChatGateOperator {
  readonly #t: Transport;

  constructor(options: ChatGateOperatorOptions) {
    if (!options.adminToken) throw new TypeError('ChatGateOperator: adminToken is required');
    this.#t = new Transport({ authorization: `Bearer ${options.adminToken}` }, options);
  }

  // Customers.

  /** POST /admin/customers. Sent once (a repeat would make a second customer). */
  createCustomer(body: CreateCustomerRequest, options: RequestOptions = {}): Promise<Customer> {
    return this.#t.json('POST', '/admin/customers', { body }, options);
  }

  /** GET /admin/customers: newest first; `q` searches the name, `plan` filters. */
  listCustomers(query: ListCustomersQuery = {}, options: RequestOptions = {}): Promise<CustomerPage> {
    return this.#t.json('GET', '/admin/customers', { query, retry: true }, options);
  }

  /** Every customer matching the query, page after page. */
  iterateCustomers(
    query: Omit<ListCustomersQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<Customer> {
    return paginate(
      (q, o) => this.listCustomers(q, o),
      (p) => p.customers,
      query,
      options,
    );
  }

  /** GET /admin/customers/{id}, with this month's usage. */
  getCustomer(id: string, options: RequestOptions = {}): Promise<Customer> {
    return this.#t.json('GET', `/admin/customers/${seg(id)}`, { retry: true }, options);
  }

  /** PATCH /admin/customers/{id}: any of plan, defaultCountry, name. */
  updateCustomer(id: string, body: UpdateCustomerRequest, options: RequestOptions = {}): Promise<Customer> {
    return this.#t.json('PATCH', `/admin/customers/${seg(id)}`, { body, retry: true }, options);
  }

  /** GET /admin/customers/{id}/usage: the quota counter of one UTC month (default this one). */
  getCustomerUsage(
    id: string,
    query: GetCustomerUsageQuery = {},
    options: RequestOptions = {},
  ): Promise<CustomerUsage> {
    return this.#t.json('GET', `/admin/customers/${seg(id)}/usage`, { query, retry: true }, options);
  }

  // Chat accounts.

  /** GET /admin/customers/{id}/chat-accounts: newest first, no secrets. */
  listCustomerChatAccounts(
    customerId: string,
    query: ListCustomerChatAccountsQuery = {},
    options: RequestOptions = {},
  ): Promise<OperatorChatAccountPage> {
    return this.#t.json('GET', `/admin/customers/${seg(customerId)}/chat-accounts`, { query, retry: true }, options);
  }

  /** Every chat account of the customer, page after page. */
  iterateCustomerChatAccounts(
    customerId: string,
    query: Omit<ListCustomerChatAccountsQuery, 'cursor'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<OperatorChatAccount> {
    return paginate(
      (q, o) => this.listCustomerChatAccounts(customerId, q, o),
      (p) => p.chatAccounts,
      query,
      options,
    );
  }

  /**
   * POST /admin/customers/{id}/chat-accounts. `{ verify: true }` has the provider check an OFFICIAL
   * account's access token first (`credentialCheck` in the answer). Sent once.
   */
  linkChatAccount(
    customerId: string,
    body: LinkChatAccountRequest,
    query: VerifyQuery = {},
    options: RequestOptions = {},
  ): Promise<OperatorChatAccount> {
    return this.#t.json('POST', `/admin/customers/${seg(customerId)}/chat-accounts`, { body, query }, options);
  }

  /** PATCH /admin/chat-accounts/{id}: any field of linkChatAccount; `verify` as there. */
  updateChatAccount(
    id: string,
    body: UpdateChatAccountRequest,
    query: VerifyQuery = {},
    options: RequestOptions = {},
  ): Promise<OperatorChatAccount> {
    return this.#t.json('PATCH', `/admin/chat-accounts/${seg(id)}`, { body, query, retry: true }, options);
  }

  /**
   * POST /admin/chat-accounts/{id}/inbound: a message a number sent to the account, as if the
   * provider had delivered it. Repeatable by providerMessageId (`duplicate: true`), so retried.
   */
  ingestInboundMessage(
    accountId: string,
    body: IngestInboundMessageRequest,
    options: RequestOptions = {},
  ): Promise<InboundIngested> {
    return this.#t.json('POST', `/admin/chat-accounts/${seg(accountId)}/inbound`, { body, retry: true }, options);
  }

  // API keys.

  /** POST /admin/customers/{id}/api-keys: the answer's `key` is shown only here. Sent once. */
  createApiKey(customerId: string, body: CreateApiKeyRequest, options: RequestOptions = {}): Promise<ApiKey> {
    return this.#t.json('POST', `/admin/customers/${seg(customerId)}/api-keys`, { body }, options);
  }

  /** GET /admin/customers/{id}/api-keys (masked). */
  async listApiKeys(customerId: string, options: RequestOptions = {}): Promise<ApiKey[]> {
    const list = await this.#t.json<Schemas['ApiKeyList']>(
      'GET',
      `/admin/customers/${seg(customerId)}/api-keys`,
      { retry: true },
      options,
    );
    return list.apiKeys;
  }

  /** The customer's API keys, as an async iterator. */
  iterateApiKeys(customerId: string, options: RequestOptions = {}): AsyncGenerator<ApiKey> {
    return iterateAll(this.listApiKeys(customerId, options));
  }

  /** DELETE /admin/api-keys/{id}: the key stops working at once. */
  async revokeApiKey(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#t.request('DELETE', `/admin/api-keys/${seg(id)}`, {}, options);
  }

  // Portal users.

  /** POST /admin/customers/{id}/users: the answer's `invitationUrl` is shown only here. Sent once. */
  createPortalUser(
    customerId: string,
    body: CreatePortalUserRequest,
    options: RequestOptions = {},
  ): Promise<PortalUserInvited> {
    return this.#t.json('POST', `/admin/customers/${seg(customerId)}/users`, { body }, options);
  }

  /** GET /admin/customers/{id}/users. */
  async listPortalUsers(customerId: string, options: RequestOptions = {}): Promise<PortalUser[]> {
    const list = await this.#t.json<Schemas['PortalUserList']>(
      'GET',
      `/admin/customers/${seg(customerId)}/users`,
      { retry: true },
      options,
    );
    return list.users;
  }

  /** The customer's portal users, as an async iterator. */
  iteratePortalUsers(customerId: string, options: RequestOptions = {}): AsyncGenerator<PortalUser> {
    return iterateAll(this.listPortalUsers(customerId, options));
  }

  /** POST /admin/portal-users/{id}/reset-password: a new one-time link. Sent once. */
  resetPortalUserPassword(id: string, options: RequestOptions = {}): Promise<PortalUserInvited> {
    return this.#t.json('POST', `/admin/portal-users/${seg(id)}/reset-password`, {}, options);
  }

  /** POST /admin/portal-users/{id}/disable: their sessions end at once; a repeat is harmless. */
  disablePortalUser(id: string, options: RequestOptions = {}): Promise<PortalUser> {
    return this.#t.json('POST', `/admin/portal-users/${seg(id)}/disable`, { retry: true }, options);
  }

  // The service.

  /** POST /admin/encryption/rekey: re-seals secrets not yet under the current key; repeatable. */
  rekey(options: RequestOptions = {}): Promise<RekeyResult> {
    return this.#t.json('POST', '/admin/encryption/rekey', { retry: true }, options);
  }

  /** GET /admin/provider: the provider API version this process calls, and every version it knows. */
  getProviderSettings(options: RequestOptions = {}): Promise<ProviderSettings> {
    return this.#t.json('GET', '/admin/provider', { retry: true }, options);
  }
}
