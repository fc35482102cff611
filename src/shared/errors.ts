// Every error the API can answer, by stable code; the HTTP mapping happens once, in the error handler.
export type Problem = { path: string; message: string };

export class AppError extends Error {
  constructor(
    readonly status: number,
    /** The value of the body's `error` field. */
    readonly code: string,
    /** Extra body fields (details, plan, limit, ...). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(code);
    this.name = 'AppError';
  }

  body(): Record<string, unknown> {
    return { error: this.code, ...this.extra };
  }
}

export const errors = {
  validation: (details: Problem[]) => new AppError(400, 'validation_error', { details }),
  invalidCursor: () => new AppError(400, 'invalid_cursor'),
  missingKey: () => new AppError(401, 'Missing x-api-key header'),
  invalidKey: () => new AppError(401, 'Invalid API key'),
  templatesNotAvailable: () => new AppError(403, 'templates_not_available'),
  featureNotAvailable: (plan: string) => new AppError(403, 'feature_not_available', { plan }),
  keyScopeViolation: () => new AppError(403, 'key_scope_violation'),
  keyScopeInsufficient: () => new AppError(403, 'key_scope_insufficient'),
  sandboxNotSupported: () => new AppError(403, 'sandbox_not_supported'),
  messageNotFound: () => new AppError(404, 'message_not_found'),
  accountNotFound: () => new AppError(404, 'account_not_found'),
  broadcastNotFound: () => new AppError(404, 'broadcast_not_found'),
  conflict: (message = 'externalId already used with a different payload') => new AppError(409, 'conflict', { message }),
  invalidChatAccount: () => new AppError(422, 'invalid_chat_account'),
  invalidMedia: (code: 'media_not_found' | 'media_type_mismatch') => new AppError(422, 'invalid_media', { code }),
  chatAccountRequired: () => new AppError(422, 'chat_account_required'),
  invalidWebhookUrl: (reason: string) => new AppError(400, 'invalid_webhook_url', { reason }),
  webhookEndpointNotFound: () => new AppError(404, 'webhook_endpoint_not_found'),
  webhookDeliveryNotFound: () => new AppError(404, 'webhook_delivery_not_found'),
  quotaExceeded: (limit: number, used: number, resetsAt: string) =>
    new AppError(429, 'quota_exceeded', { limit, used, resetsAt }),
  // Operator API and HTTP plumbing (not in the public spec's table; documented in docs/api.md)
  notFound: () => new AppError(404, 'not_found'),
  unauthorized: () => new AppError(401, 'unauthorized'),
  payloadTooLarge: () => new AppError(413, 'payload_too_large'),
  unsupportedMediaType: () => new AppError(415, 'unsupported_media_type'),
  limitReached: (what: string, limit: number) => new AppError(409, 'limit_reached', { message: `at most ${limit} ${what}` }),
} as const;

export const operatorErrors = {
  alreadyExists: (what: string) => new AppError(409, 'already_exists', { message: `${what} already exists` }),
} as const;
