// Every error the API can answer, by stable code. An AppError carries its HTTP status (and any extra
// body fields and headers) from where it is made, so the service that refuses decides the answer;
// the error handlers (API and portal) write it out as it is.
export type Problem = { path: string; message: string };

export class AppError extends Error {
  constructor(
    readonly status: number,
    /** The value of the body's `error` field. */
    readonly code: string,
    /** Extra body fields (details, plan, limit, ...). */
    readonly extra: Record<string, unknown> = {},
    /** Response headers (Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(code);
    this.name = 'AppError';
  }

  body(): Record<string, unknown> {
    return { error: this.code, ...this.extra };
  }
}

/** What an operator API `not_found` names. */
export type OperatorResource = 'customer' | 'chat account' | 'API key' | 'portal user';

export const errors = {
  validation: (details: Problem[]) => new AppError(400, 'validation_error', { details }),
  invalidCursor: () => new AppError(400, 'invalid_cursor'),
  // The spec fixes these two `error` sentences; `message` (an added field) says what to do.
  missingKey: () =>
    new AppError(401, 'Missing x-api-key header', {
      message: 'Send your API key in the x-api-key header, as is (ak_live_… or ak_test_…, no "Bearer" prefix).',
    }),
  invalidKey: () =>
    new AppError(401, 'Invalid API key', {
      message:
        'This key is unknown or revoked: check that it was copied whole, or create a new one (portal: API keys; operator: chatgate admin keys create).',
    }),
  templatesNotAvailable: () => new AppError(403, 'templates_not_available'),
  featureNotAvailable: (plan: string) => new AppError(403, 'feature_not_available', { plan }),
  keyScopeViolation: () => new AppError(403, 'key_scope_violation'),
  keyScopeInsufficient: () => new AppError(403, 'key_scope_insufficient'),
  sandboxNotSupported: () => new AppError(403, 'sandbox_not_supported'),
  messageNotFound: () => new AppError(404, 'message_not_found'),
  accountNotFound: () => new AppError(404, 'account_not_found'),
  broadcastNotFound: () => new AppError(404, 'broadcast_not_found'),
  inboundMessageNotFound: () => new AppError(404, 'inbound_message_not_found'),
  conflict: (message = 'externalId already used with a different payload') =>
    new AppError(409, 'conflict', { message }),
  /** POST /messages/{id}/cancel on a message that has left (or is leaving): `status` is its status. */
  notCancellable: (status: string, message: string) => new AppError(409, 'not_cancellable', { message, status }),
  invalidChatAccount: () => new AppError(422, 'invalid_chat_account'),
  invalidMedia: (code: 'media_not_found' | 'media_type_mismatch', message?: string) =>
    new AppError(422, 'invalid_media', { code, ...(message !== undefined ? { message } : {}) }),
  mediaTooLarge: () => new AppError(413, 'media_too_large', { message: 'files may be at most 20 MB (20971520 bytes)' }),
  mediaPendingLimit: (limit: number) =>
    new AppError(429, 'media_pending_limit', {
      message: `at most ${limit} uploaded files may wait unused; send or let them expire (1 hour)`,
    }),
  /** GET /inbound-messages/{id}/media: the message carries no file. */
  inboundMediaNotFound: () =>
    new AppError(404, 'inbound_media_not_found', { message: 'this inbound message carries no file' }),
  /** The file is still being fetched from the provider: try again shortly. */
  inboundMediaNotReady: (attempts: number, error: string | null) =>
    new AppError(409, 'media_not_ready', { state: 'pending', attempts, lastError: error }, { 'retry-after': '5' }),
  /** The file will not be served: failed for good, too large or of a type not fetched. */
  inboundMediaUnavailable: (state: string, error: string | null) =>
    new AppError(410, 'media_unavailable', { state, lastError: error }),
  /** POST /inbound-messages/{id}/read: the provider refused or could not be reached; nothing was recorded. */
  readNotMarked: (message: string) => new AppError(503, 'provider_unavailable', { message }),
  /** The account's provider calls are booked further ahead than a request waits. */
  providerBusy: () =>
    new AppError(
      503,
      'provider_unavailable',
      { message: "the account's provider rate is taken by its sends; try again" },
      { 'retry-after': '1' },
    ),
  chatAccountRequired: () => new AppError(422, 'chat_account_required'),
  invalidWebhookUrl: (reason: string) => new AppError(400, 'invalid_webhook_url', { reason }),
  webhookEndpointNotFound: () => new AppError(404, 'webhook_endpoint_not_found'),
  webhookDeliveryNotFound: () => new AppError(404, 'webhook_delivery_not_found'),
  /** GET /events/stream: the customer already has `limit` streams open (decision 0072). */
  streamLimit: (limit: number) =>
    new AppError(
      429,
      'stream_limit',
      { limit, message: `at most ${limit} event streams may be open at once for a customer; close one` },
      { 'retry-after': '60' },
    ),
  quotaExceeded: (limit: number, used: number, resetsAt: string) =>
    new AppError(429, 'quota_exceeded', { limit, used, resetsAt }),
  // Operator API and HTTP plumbing (not in the public spec's table; documented in docs/api.md)
  /** `resource` ("customer", "chat account", ...) names what was not found, in `resource` and `message`. */
  notFound: (resource?: OperatorResource) =>
    new AppError(404, 'not_found', resource ? { resource, message: `${resource} not found` } : {}),
  unauthorized: () =>
    new AppError(401, 'unauthorized', {
      message: 'The operator API needs Authorization: Bearer <ADMIN_TOKEN> (the token the service was started with).',
    }),
  payloadTooLarge: () => new AppError(413, 'payload_too_large'),
  unsupportedMediaType: () => new AppError(415, 'unsupported_media_type'),
  /**
   * The database (or its disk) cannot do the work now: answered for every database fault
   * (db/db-errors.ts), never a 500. `reason` names the fault; the request may be sent again.
   */
  databaseUnavailable: (reason: string, retryAfterSeconds = 5) =>
    new AppError(
      503,
      'database_unavailable',
      { reason, message: 'the database cannot take this request now; try again shortly' },
      { 'retry-after': String(retryAfterSeconds) },
    ),
  limitReached: (what: string, limit: number) =>
    new AppError(409, 'limit_reached', { message: `at most ${limit} ${what}` }),
} as const;

export const operatorErrors = {
  alreadyExists: (what: string) => new AppError(409, 'already_exists', { message: `${what} already exists` }),
  keyMismatch: (message: string) => new AppError(409, 'key_mismatch', { message }),
} as const;

/** The template catalog's errors (spec, Errors); `provider` is the sanitized provider detail. */
export const templateErrors = {
  accessInsufficient: (required: 'read' | 'manage') =>
    new AppError(403, 'template_access_insufficient', {
      message: `this API key's templateAccess must be ${required === 'read' ? 'read or manage' : 'manage'}`,
    }),
  sandboxNotSupported: () =>
    new AppError(403, 'sandbox_not_supported', { message: 'sandbox keys cannot create templates at the provider' }),
  alreadyExists: (provider: unknown) =>
    new AppError(409, 'template_already_exists', {
      message: 'a template with this name and language already exists',
      provider,
    }),
  rejectedByProvider: (message: string, provider: unknown) =>
    new AppError(422, 'template_rejected_by_provider', { message, provider }),
  managementUnavailable: (message: string, provider?: unknown) =>
    new AppError(422, 'template_management_unavailable', { message, ...(provider !== undefined ? { provider } : {}) }),
  providerRateLimited: (retryAfterSeconds: number, provider: unknown) =>
    new AppError(
      429,
      'provider_rate_limited',
      { message: 'the provider rate-limited template management calls for this account', provider },
      { 'retry-after': String(retryAfterSeconds) },
    ),
  providerUnavailable: (message: string, provider?: unknown) =>
    new AppError(503, 'provider_unavailable', { message, ...(provider !== undefined ? { provider } : {}) }),
  providerUnreachable: (message: string) => new AppError(503, 'provider_unreachable', { message }),
} as const;
