// Every error body the API answers, by its `error` code: status, meaning, extra fields and an
// example. The document gives each code a schema (components.schemas) and each operation the codes
// it can answer (its route's 'x-errors'); the codes are those of src/shared/errors.ts and the spec's table.
import { type ErrorDoc, providerDetail, str } from './error-doc-parts.js';
import { ADDED_DOCS } from './error-docs-added.js';

export type { ErrorDoc };

const DOCS = {
  ...ADDED_DOCS,
  validation_error: {
    status: 400,
    schema: 'ValidationError',
    description: 'The request fails validation; `details` has one entry per problem.',
    extra: {
      details: {
        type: 'array',
        items: {
          type: 'object',
          required: ['path', 'message'],
          properties: { path: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
    example: {
      error: 'validation_error',
      details: [{ path: 'to.phoneE164', message: 'must be + followed by 7 to 15 digits' }],
    },
  },
  bad_request: {
    status: 400,
    schema: 'BadRequestError',
    description: 'A request the router cannot read (a malformed %-escape, an over-long parameter).',
    extra: { message: str('What was wrong.') },
  },
  invalid_cursor: { status: 400, schema: 'InvalidCursorError', description: 'Malformed `cursor`.' },
  invalid_webhook_url: {
    status: 400,
    schema: 'InvalidWebhookUrlError',
    description: 'Webhook URL not HTTPS, with embedded credentials, or targeting a private or loopback host.',
    extra: { reason: str('Why the URL is refused.') },
    example: { error: 'invalid_webhook_url', reason: 'the URL must use https' },
  },
  'Missing x-api-key header': {
    status: 401,
    schema: 'MissingApiKeyError',
    description: 'No `x-api-key` header.',
    extra: { message: str('What to do.') },
  },
  'Invalid API key': {
    status: 401,
    schema: 'InvalidApiKeyError',
    description: 'Unknown or revoked key.',
    extra: { message: str('What to do.') },
  },
  unauthorized: {
    status: 401,
    schema: 'OperatorUnauthorizedError',
    description: 'Operator API: missing or wrong `Authorization: Bearer <ADMIN_TOKEN>`.',
    extra: { message: str('What to do.') },
  },
  templates_not_available: {
    status: 403,
    schema: 'TemplatesNotAvailableError',
    description: 'Template send on plan Free.',
  },
  feature_not_available: {
    status: 403,
    schema: 'FeatureNotAvailableError',
    description: 'The feature is not in the plan (webhooks and broadcasts: Basic and Pro; inbox, rules: Pro).',
    extra: { plan: str("The caller's plan.") },
    example: { error: 'feature_not_available', plan: 'starter' },
  },
  key_scope_violation: {
    status: 403,
    schema: 'KeyScopeViolationError',
    description: 'A key scoped to one chat account used on another account.',
  },
  key_scope_insufficient: {
    status: 403,
    schema: 'KeyScopeInsufficientError',
    description: 'A key scoped to one chat account tried to manage webhooks or forwarding rules.',
  },
  sandbox_not_supported: {
    status: 403,
    schema: 'SandboxNotSupportedError',
    description:
      'Not with a sandbox key: it changes nothing live (broadcasts and cancelling them, cancelling a live message, creating templates, inbox filters, suppression lists, opt-out keywords).',
    extra: { message: str('What a sandbox key cannot do.') },
  },
  template_access_insufficient: {
    status: 403,
    schema: 'TemplateAccessInsufficientError',
    description: "The key's `templateAccess` is too low (list: read or manage; create: manage).",
    extra: { message: str('The level needed.') },
  },
  not_found: {
    status: 404,
    schema: 'NotFoundError',
    description: 'Unknown route, or an unknown operator resource: then `resource` names it and `message` says so.',
    extra: {
      resource: { type: 'string', enum: ['customer', 'chat account', 'API key', 'portal user'] },
      message: str('"customer not found" and the like.'),
    },
    example: { error: 'not_found', resource: 'customer', message: 'customer not found' },
  },
  message_not_found: {
    status: 404,
    schema: 'MessageNotFoundError',
    description: 'Unknown, foreign or purged message.',
  },
  inbound_media_not_found: {
    status: 404,
    schema: 'InboundMediaNotFoundError',
    description: 'The inbound message carries no file.',
    extra: { message: str('Explanation.') },
  },
  media_not_ready: {
    status: 409,
    schema: 'MediaNotReadyError',
    description: 'The file is still being fetched from the provider (`state: pending`); try again after Retry-After.',
    extra: {
      state: str('pending'),
      attempts: { type: 'integer', description: 'Fetch attempts so far.' },
      lastError: { type: ['string', 'null'], description: "The last attempt's error, if any." },
    },
    headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
    example: {
      error: 'media_not_ready',
      state: 'pending',
      attempts: 2,
      lastError: 'media lookup: provider answered HTTP 503',
    },
  },
  media_unavailable: {
    status: 410,
    schema: 'MediaUnavailableError',
    description:
      'The file will not be served: `failed` (given up after its attempts), `skipped_too_large` (over INBOUND_MEDIA_MAX_BYTES) or `skipped_type` (a type INBOUND_MEDIA_TYPES leaves out).',
    extra: {
      state: str('failed, skipped_too_large or skipped_type.'),
      lastError: { type: ['string', 'null'], description: 'Why.' },
    },
    example: {
      error: 'media_unavailable',
      state: 'skipped_too_large',
      lastError: 'the file is larger than 16777216 bytes (INBOUND_MEDIA_MAX_BYTES)',
    },
  },
  account_not_found: {
    status: 404,
    schema: 'AccountNotFoundError',
    description: "`chatAccountId` does not exist or is not the caller's.",
  },
  broadcast_not_found: {
    status: 404,
    schema: 'BroadcastNotFoundError',
    description: "Unknown broadcast, another customer's, or (scoped key) another account's.",
  },
  inbound_message_not_found: {
    status: 404,
    schema: 'InboundMessageNotFoundError',
    description: "Unknown or purged inbound message, another customer's, or (scoped key) another account's.",
  },
  webhook_endpoint_not_found: {
    status: 404,
    schema: 'WebhookEndpointNotFoundError',
    description: "Unknown webhook endpoint, or another customer's.",
  },
  webhook_delivery_not_found: {
    status: 404,
    schema: 'WebhookDeliveryNotFoundError',
    description: 'Unknown delivery of this endpoint.',
  },
  forwarding_rule_not_found: {
    status: 404,
    schema: 'ForwardingRuleNotFoundError',
    description: "Unknown forwarding rule, or another customer's.",
  },
  suppression_not_found: {
    status: 404,
    schema: 'SuppressionNotFoundError',
    description: "The number is not on this account's suppression list.",
  },
  conflict: {
    status: 409,
    schema: 'ConflictError',
    description: 'The `externalId` exists with a different payload; nothing was created.',
    extra: { message: str('What conflicts.') },
    example: { error: 'conflict', message: 'externalId already used with a different payload' },
  },
  not_cancellable: {
    status: 409,
    schema: 'NotCancellableError',
    description:
      'The message has left (`sent` or later), failed for another reason, or a worker is sending it at this moment (it is then `queued`: read it again to see how the send ended). Nothing was changed.',
    extra: { message: str('Why.'), status: str('The message status now.') },
    example: {
      error: 'not_cancellable',
      message: 'the message is sent: only a pending or queued message can be cancelled',
      status: 'sent',
    },
  },
  template_already_exists: {
    status: 409,
    schema: 'TemplateAlreadyExistsError',
    description: 'A template with this name and language already exists.',
    extra: { message: str('Explanation.'), provider: providerDetail },
  },
  limit_reached: {
    status: 409,
    schema: 'LimitReachedError',
    description: 'A count limit: 5 active webhook endpoints, 50 forwarding rules; operator: accounts per plan, 5 keys.',
    extra: { message: str('Which limit.') },
    example: { error: 'limit_reached', message: 'at most 5 active webhook endpoints' },
  },
  already_exists: {
    status: 409,
    schema: 'AlreadyExistsError',
    description: 'Operator API: the resource exists (a phoneNumberId linked twice, a portal user with this email).',
    extra: { message: str('What exists.') },
  },
  key_mismatch: {
    status: 409,
    schema: 'KeyMismatchError',
    description:
      "Operator API, rekey: this process's ENCRYPTION_KEY is not the database's current key (restart it with the new key first).",
    extra: { message: str('The key ids involved.') },
  },
  payload_too_large: {
    status: 413,
    schema: 'PayloadTooLargeError',
    description: 'The body is over the route limit (1 MiB by default, 8 MiB for broadcasts).',
  },
  media_too_large: {
    status: 413,
    schema: 'MediaTooLargeError',
    description: 'An upload over 20 MB (20,971,520 bytes).',
    extra: { message: str('The limit.') },
  },
  unsupported_media_type: {
    status: 415,
    schema: 'UnsupportedMediaTypeError',
    description: 'Another content type than the route reads (application/json; multipart/form-data for uploads).',
  },
  invalid_chat_account: {
    status: 422,
    schema: 'InvalidChatAccountError',
    description: "`chatAccountId` in a send does not exist, is not the caller's, or cannot send on the channel.",
  },
  invalid_media: {
    status: 422,
    schema: 'InvalidMediaError',
    description: '`mediaId` missing, deleted, foreign, or of the wrong type for the content.',
    extra: {
      code: { type: 'string', enum: ['media_not_found', 'media_type_mismatch'] },
      message: str('Which rule failed.'),
    },
    example: { error: 'invalid_media', code: 'media_not_found' },
  },
  chat_account_required: {
    status: 422,
    schema: 'ChatAccountRequiredError',
    description: 'Several accounts or none, and no `chatAccountId` given.',
  },
  template_rejected_by_provider: {
    status: 422,
    schema: 'TemplateRejectedByProviderError',
    description: 'The provider rejected the template definition.',
    extra: { message: str("The provider's explanation."), provider: providerDetail },
  },
  template_management_unavailable: {
    status: 422,
    schema: 'TemplateManagementUnavailableError',
    description: 'No working management credential for the account (or a DIRECT account).',
    extra: { message: str('Why.'), provider: providerDetail },
  },
  quota_exceeded: {
    status: 429,
    schema: 'QuotaExceededError',
    description: 'The monthly quota is used up (no Retry-After).',
    extra: {
      limit: { type: 'integer' },
      used: { type: 'integer' },
      resetsAt: { type: 'string', format: 'date-time', description: 'First day of next month, 00:00 UTC.' },
    },
    example: { error: 'quota_exceeded', limit: 10000, used: 10000, resetsAt: '2026-07-01T00:00:00.000Z' },
  },
  media_pending_limit: {
    status: 429,
    schema: 'MediaPendingLimitError',
    description: 'More than 200 uploaded files wait unused.',
    extra: { message: str('The rule.') },
  },
  provider_rate_limited: {
    status: 429,
    schema: 'ProviderRateLimitedError',
    description: 'The provider rate-limited a template operation; see Retry-After.',
    extra: { message: str('Explanation.'), provider: providerDetail },
    headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  },
  too_many_attempts: {
    status: 429,
    schema: 'TooManyAttemptsError',
    description:
      'Operator API: 10 wrong tokens from this address within a minute; every request from it waits, see Retry-After.',
    extra: { message: str('How long to wait.') },
    headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  },
  provider_unavailable: {
    status: 503,
    schema: 'ProviderUnavailableError',
    description:
      'The provider failed a template operation, or did not mark an inbound message read (nothing was recorded; try again).',
    extra: { message: str('Explanation.'), provider: providerDetail },
  },
  provider_unreachable: {
    status: 503,
    schema: 'ProviderUnreachableError',
    description: 'The provider could not be reached for a template operation.',
    extra: { message: str('Explanation.') },
  },
  database_unavailable: {
    status: 503,
    schema: 'DatabaseUnavailableError',
    description:
      'The database (or its disk) cannot take the request now: it did not answer within its deadline, the connection was lost, or it is full, read-only or restarting. Try again after Retry-After; a send with the same `externalId` is never accepted twice.',
    extra: {
      reason: {
        type: 'string',
        enum: [
          'deadline',
          'connection',
          'disk_full',
          'read_only',
          'too_many_connections',
          'out_of_resources',
          'shutdown',
          'io_error',
        ],
        description: 'What failed (for operators; clients treat every reason alike).',
      },
      message: str('Explanation.'),
    },
    example: {
      error: 'database_unavailable',
      reason: 'deadline',
      message: 'the database cannot take this request now; try again shortly',
    },
    headers: { 'retry-after': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  },
  'Internal server error': {
    status: 500,
    schema: 'InternalServerError',
    description: 'Unexpected error; retrying a send with the same `externalId` is safe.',
  },
} satisfies Record<string, ErrorDoc>;

export type ErrorCode = keyof typeof DOCS;
export const ERROR_DOCS: Record<ErrorCode, ErrorDoc> = DOCS;

/** The JSON schema of one code's body: `error` is that code; other fields may be added over time. */
export function errorSchema(code: string, doc: ErrorDoc): Record<string, unknown> {
  return {
    type: 'object',
    description: doc.description,
    required: [
      'error',
      ...Object.keys(doc.extra ?? {}).filter((k) => k !== 'message' && k !== 'provider' && k !== 'resource'),
    ],
    properties: { error: { type: 'string', const: code }, ...(doc.extra ?? {}) },
    additionalProperties: true,
  };
}
