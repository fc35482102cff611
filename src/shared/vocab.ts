// Vocabularies of the spec, one place each.
export const MESSAGE_STATUSES = ['pending', 'queued', 'sent', 'delivered', 'read', 'failed'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** A broadcast's status, derived from its messages (see toBroadcast). */
export const BROADCAST_STATUSES = ['active', 'completed', 'cancelled'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/**
 * The spec's four content types, then the kinds added beyond it (issue #24, decision 0032): more
 * media, location, contact cards, interactive messages and reactions.
 */
export const CONTENT_TYPES = [
  'text',
  'template',
  'image',
  'document',
  'audio',
  'video',
  'sticker',
  'location',
  'contacts',
  'interactive',
  'reaction',
] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export const ACCOUNT_TYPES = ['OFFICIAL', 'DIRECT'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const ACCOUNT_STATUSES = ['PENDING', 'AUTHENTICATING', 'CONNECTED', 'DISCONNECTED', 'BANNED', 'ERROR'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];
export const SEND_POLICY_MODES = ['DISABLED', 'TEST', 'PRODUCTION', 'GLOBAL'] as const;
export type SendPolicyMode = (typeof SEND_POLICY_MODES)[number];
export const WABA_VERIFICATIONS = ['verified', 'unverifiable', 'unreachable'] as const;

export const TEMPLATE_ACCESS = ['none', 'read', 'manage'] as const;
export type TemplateAccess = (typeof TEMPLATE_ACCESS)[number];

export const CHANNEL_OFFICIAL = 'chat_official';
export const CHANNEL_DIRECT = 'chat_direct';

/**
 * The event types of the spec's envelope. An endpoint created without `events` subscribes to
 * these (DEFAULT_EVENT_TYPES), as before any type was added. webhook.test is only ever queued to the
 * one endpoint POST /webhook-endpoints/{id}/test names, whatever it subscribes to: subscribing to
 * it brings no other endpoint's test events.
 */
export const SPEC_EVENT_TYPES = ['message.status', 'message.inbound', 'sender.first_inbound', 'webhook.test'] as const;
/**
 * Every type an endpoint may subscribe to: the spec's, then the types added beyond it
 * (quota.threshold, decision 0013; template.status, decision 0015), which are opt-in: an endpoint gets them only when its `events`
 * name them, so what existing endpoints receive never changes.
 */
export const EVENT_TYPES = [
  ...SPEC_EVENT_TYPES,
  'quota.threshold',
  'template.status',
  // A portfolio's messaging limit reached 80 % or 100 % (decision 0044).
  'account.messaging_limit',
] as const;
export const DEFAULT_EVENT_TYPES: readonly EventType[] = SPEC_EVENT_TYPES;
export type EventType = (typeof EVENT_TYPES)[number];

/** Send-failure codes stored in error.code / lastErrorCode. */
export const SEND_ERROR_CODES = {
  SANDBOX_SIMULATED_FAILURE: 'SANDBOX_SIMULATED_FAILURE',
  SANDBOX_BLOCKED: 'SANDBOX_BLOCKED',
  MEDIA_UNAVAILABLE: 'MEDIA_UNAVAILABLE',
  ACCOUNT_NOT_CONNECTED: 'ACCOUNT_NOT_CONNECTED',
  SEND_DISABLED: 'SEND_DISABLED',
  BROADCAST_CANCELLED: 'BROADCAST_CANCELLED',
  /** The recipient is on the account's suppression list (marketing templates, broadcasts); no provider call. */
  RECIPIENT_OPTED_OUT: 'RECIPIENT_OPTED_OUT',
  /** The recipient's 24-hour reply window is closed: a template is needed (provider 131047, or requireReplyWindow). */
  REENGAGEMENT_REQUIRED: 'REENGAGEMENT_REQUIRED',
  /** POST /messages/{id}/cancel stopped it before it left. */
  CANCELLED: 'CANCELLED',
  /** The template is PAUSED or DISABLED at the provider (its status webhook, decision 0015); no provider call. */
  TEMPLATE_NOT_APPROVED: 'TEMPLATE_NOT_APPROVED',
  /**
   * Its attempts ran out with the last one unfinished: the worker stopped during the send (e.g. a
   * message that crashes the worker), so it is failed instead of being sent again (decision 0021).
   */
  SEND_INTERRUPTED: 'SEND_INTERRUPTED',
  /**
   * The message it replies or reacts to never got a provider id (it failed) or no longer exists,
   * so the provider cannot be told which message is meant; no provider call (decision 0032).
   */
  REPLY_TARGET_UNAVAILABLE: 'REPLY_TARGET_UNAVAILABLE',
  /** A MARKETING template to a market in MARKETING_BLOCKED_MARKETS, where the provider refuses them; no provider call. */
  MARKETING_MARKET_BLOCKED: 'MARKETING_MARKET_BLOCKED',
  /**
   * A business-initiated send (a template to a recipient whose reply window is closed) beyond the
   * portfolio's messaging limit: its unique recipients of the last 24 hours are all used; no provider call (decision 0044).
   */
  PORTFOLIO_LIMIT_REACHED: 'PORTFOLIO_LIMIT_REACHED',
} as const;

/** Error codes of a message cancelled before it left (it stays the spec's `failed`). */
const CANCEL_CODES: readonly string[] = [SEND_ERROR_CODES.CANCELLED, SEND_ERROR_CODES.BROADCAST_CANCELLED];

/** A message cancelled before it left: `failed` with CANCELLED or BROADCAST_CANCELLED. */
export const isCancelled = (status: string, code: string | null | undefined): boolean =>
  status === 'failed' && code !== null && code !== undefined && CANCEL_CODES.includes(code);

/** The same rule over a messages row, for SQL (`status`, `last_error_code`). */
export const CANCELLED_SQL = `status = 'failed' AND last_error_code IN (${CANCEL_CODES.map((c) => `'${c}'`).join(', ')})`;

/** How a number came onto a chat account's suppression list (decision 0014). */
export const SUPPRESSION_SOURCES = ['provider_error', 'user_preferences', 'keyword', 'customer'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];
