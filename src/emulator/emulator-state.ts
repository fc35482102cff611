// The emulator's in-memory world: numbers, failure rules, what it received, receipt settings.
import type { EmulatedPortfolio } from './emulator-portfolios.js';

export type FailureRule = {
  id: number;
  /**
   * Recipient digits (no +); a trailing * matches a prefix, a leading * a suffix. Absent: any send.
   * `media`: media uploads (only). `lookup`: phone-number reads, GET /{phone-number-id} (only).
   * `media_download`: received files, GET /{media-id} and the download URL (only). `read`: read marks (only).
   */
  to?: string;
  phoneNumberId?: string;
  /** How many sends it applies to; absent: all. */
  times?: number;
  /** Answer with this HTTP status and the Graph error envelope of `error` (or a bare body). */
  httpStatus?: number;
  error?: { code: number; subcode?: number; message?: string };
  /** Accept the connection and never answer (the client times out). */
  hang?: boolean;
  /**
   * Accept the send (recorded, its receipts posted) and answer only after this many ms: a slow
   * provider that has the message although the client may time out first.
   */
  answerAfterMs?: number;
  /** Accept the send, then report it failed in a receipt with this error. */
  asyncFailure?: { code: number; title?: string };
  /**
   * Makes the rule apply to template management calls (`list`, `create` or `any`) instead of
   * sends; `wabaId` narrows it to one WABA. Template errors may carry the user title and message
   * the provider adds to template errors, and `retryAfter` (seconds) sets a Retry-After header.
   */
  templateOperation?: TemplateOperation | 'any';
  wabaId?: string;
  userTitle?: string;
  userMessage?: string;
  retryAfter?: number;
};

export type TemplateOperation = 'list' | 'create';

/** A template as the provider keeps it (the fields of its REST answers). */
export type EmulatedTemplate = {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  parameter_format?: string;
  components: Record<string, unknown>[];
  rejected_reason?: string;
  quality_score?: { score: string; date: number };
  [field: string]: unknown;
};

export type ReceiptSettings = {
  /** Statuses posted after an accepted send, in this order unless shuffled. */
  statuses: ('sent' | 'delivered' | 'read')[];
  delayMs: number;
  order: 'in-order' | 'reverse' | 'shuffle';
  /** Extra copies of each receipt. */
  duplicates: number;
  /** Receipts per POST (batched into one payload). */
  batch: boolean;
  enabled: boolean;
  /** Post the receipts, and wait for them, before answering the send (the race with our commit). */
  beforeResponse: boolean;
  /** Leave biz_opaque_callback_data out of receipts (match by wamid only). */
  omitCallbackData: boolean;
  /** At most this many webhook POSTs in flight at once, over all sends (0: no limit). */
  maxInFlight: number;
  /**
   * The `pricing` object the `sent` receipt and the first `delivered`/`read` receipt carry, as the
   * provider's (docs/provider-protocol-2026.md). Absent: derived from the send (a template:
   * `regular`, billable, its catalog category; other content: `service`, `free_customer_service`,
   * not billable), as with `derived`. null: receipts carry none (older webhooks).
   */
  pricing?: Record<string, unknown> | null | 'derived';
};

export type NumberSettings = {
  accessToken?: string;
  throughputMps?: number;
  wabaId?: string;
  displayPhoneNumber?: string;
  verifiedName?: string;
  /** The number's business accepted the Marketing Messages API terms: /marketing_messages takes its templates. */
  marketingMessagesOnboarded?: boolean;
  /** Where this number's webhooks go instead of the app's callback URL (the provider's per-number override). */
  callbackUrl?: string;
  /**
   * A throughput upgrade under way (epoch ms): until then every send is refused with 131057
   * ("Account in maintenance mode"), as the provider does for up to a minute; then the number's
   * `throughputMps` becomes `throughputAfterMaintenance`, if set (its level reads HIGH above 80).
   */
  maintenanceUntil?: number;
  throughputAfterMaintenance?: number;
};

/** Whether the number is in its maintenance window now; one whose window ended takes its new throughput. */
export function inMaintenance(n: NumberSettings | undefined, now = Date.now()): boolean {
  if (n?.maintenanceUntil === undefined) return false;
  if (now < n.maintenanceUntil) return true;
  if (n.throughputAfterMaintenance !== undefined) n.throughputMps = n.throughputAfterMaintenance;
  delete n.maintenanceUntil;
  delete n.throughputAfterMaintenance;
  return false;
}

/** One customer's run of Embedded Signup: what the flow gave the page, and the onboarding done since. */
export type EmulatedSignup = {
  code: string;
  wabaId: string;
  phoneNumberId: string;
  businessId: string;
  /** The business token the code exchanges for. */
  accessToken: string;
  /** The number's two-step verification PIN when it already had one (register must give it); else any. */
  pin: string | null;
  exchanged: boolean;
  subscribed: boolean;
  registeredPin: string | null;
};

export type SentRecord = {
  phoneNumberId: string;
  to: string;
  type: string;
  messageId: string | null;
  wamid: string;
  at: number;
  payload: Record<string, unknown>;
  /** The endpoint that took it: /messages or /marketing_messages. */
  route: 'messages' | 'marketing_messages';
};

/** A send answered 130429 (over the number's throughput), with the emulator's receive time. */
export type ThrottledRecord = { phoneNumberId: string; to: string; messageId: string | null; at: number };

export function matchesRecipient(pattern: string | undefined, to: string): boolean {
  if (pattern === undefined) return true;
  const p = pattern.replace(/^\+/, '');
  if (p.endsWith('*')) return to.startsWith(p.slice(0, -1));
  if (p.startsWith('*')) return to.endsWith(p.slice(1));
  return to === p;
}

function consume(rule: FailureRule | undefined): FailureRule | null {
  if (!rule) return null;
  if (rule.times !== undefined) rule.times--;
  return rule;
}

export function createEmulatorState() {
  let nextRule = 1;
  return {
    numbers: new Map<string, NumberSettings>(),
    rules: [] as FailureRule[],
    sent: [] as SentRecord[],
    /** Sends refused for a malformed payload (emulator-payloads.ts), with what was wrong. */
    refused: [] as { phoneNumberId: string; to: string; problem: string; payload: Record<string, unknown> }[],
    /** Ids of the inbound messages posted (POST /__emulator/inbound): replies and reactions may name them. */
    inboundIds: new Set<string>(),
    /** Phone-number reads received (GET /{phone-number-id}), whatever their answer. */
    lookups: [] as { phoneNumberId: string; at: number }[],
    /** Sends a `hang` rule held (never answered), as they arrived: a test knows a send reached the provider. */
    held: [] as ThrottledRecord[],
    /** Sends refused with 130429, so that pacing can be judged on every arrival, not only accepted ones. */
    throttled: [] as ThrottledRecord[],
    /** Sends refused with 131056 (the pair rate limit), with the emulator's receive time. */
    pairLimited: [] as ThrottledRecord[],
    /** Sends refused with 131057 (the number's maintenance window), with the emulator's receive time. */
    maintenanceRefused: [] as ThrottledRecord[],
    /** Business portfolios by id: their WABAs, messaging limit and conversation starts (emulator-portfolios.ts). */
    portfolios: new Map<string, EmulatedPortfolio>(),
    /** Sends over their portfolio's messaging limit (accepted, then failed in a receipt). */
    portfolioRefused: [] as ThrottledRecord[],
    /** The last inbound message of each (number, user), `phoneNumberId:digits` → epoch ms: its service window. */
    lastInbound: new Map<string, number>(),
    receipts: {
      statuses: ['sent', 'delivered'],
      delayMs: 20,
      order: 'in-order',
      duplicates: 0,
      batch: false,
      enabled: true,
      beforeResponse: false,
      omitCallbackData: false,
      maxInFlight: 0,
    } as ReceiptSettings,
    /** Webhook POSTs made (each attempt), attempts after a failed one, and webhooks given up on. */
    webhookStats: { posts: 0, retries: 0, failures: 0, firstPostAt: 0, lastAnsweredAt: 0 },
    latencyMs: 0,
    /** Per-number throughput enforced with the provider's 130429 (default 80/s as the provider). */
    defaultThroughputMps: 80,
    /** One send per pair (number, recipient) per window, else 131056 (the provider documents 1 per 6 s). */
    pairRateLimit: false,
    pairRateWindowMs: 6000,
    /** Templates per WABA, in creation order (the order listings page through). */
    templates: new Map<string, EmulatedTemplate[]>(),
    /** Per-WABA management tokens: when set, template calls must carry exactly this bearer token. */
    managementTokens: new Map<string, string>(),
    /** Embedded Signup sessions by code, and what each onboarding step did (emulator-signup.ts). */
    signups: new Map<string, EmulatedSignup>(),
    /** Per-WABA category the provider files new templates under, whatever was asked (recategorisation). */
    forcedCategories: new Map<string, string>(),
    /** Template management calls received (for tests: which token, which query). */
    templateCalls: [] as {
      operation: TemplateOperation;
      wabaId: string;
      token: string;
      query: Record<string, string>;
    }[],
    media: new Map<
      string,
      { mimeType: string; size: number; filename: string | null; sha256: string; phoneNumberId: string }
    >(),
    /** Files users sent (inbound), served by GET /{media-id} and the download URL. */
    inboundMedia: new Map<string, { mimeType: string; sha256: string; data: Buffer; phoneNumberId: string }>(),
    /** Media lookups and downloads received (GET /{media-id}, the download URL), whatever their answer. */
    mediaFetches: [] as { mediaId: string; step: 'lookup' | 'download'; at: number; status: number }[],
    /** Read marks received (POST /messages with status "read"), as sent. */
    reads: [] as { phoneNumberId: string; messageId: string; typing: boolean; at: number }[],
    addRule(rule: Omit<FailureRule, 'id'>): FailureRule {
      const r = { ...rule, id: nextRule++ };
      this.rules.push(r);
      return r;
    },
    /** The first rule that applies to this send, consuming one of its `times`. */
    takeRule(phoneNumberId: string, to: string): FailureRule | null {
      // Upload and lookup rules name `media` / `lookup` explicitly; a rule without `to` is for sends only.
      const special = ['media', 'lookup', 'media_download', 'read'];
      const matches = (r: FailureRule) =>
        special.includes(to) ? r.to === to : !special.includes(r.to ?? '') && matchesRecipient(r.to, to);
      return consume(
        this.rules.find(
          (r) =>
            r.templateOperation === undefined &&
            (r.phoneNumberId === undefined || r.phoneNumberId === phoneNumberId) &&
            matches(r) &&
            (r.times === undefined || r.times > 0),
        ),
      );
    },
    /** The first rule that applies to this template call, consuming one of its `times`. */
    takeTemplateRule(operation: TemplateOperation, wabaId: string): FailureRule | null {
      return consume(
        this.rules.find(
          (r) =>
            (r.templateOperation === operation || r.templateOperation === 'any') &&
            (r.wabaId === undefined || r.wabaId === wabaId) &&
            (r.times === undefined || r.times > 0),
        ),
      );
    },
  };
}

export type EmulatorState = ReturnType<typeof createEmulatorState>;
