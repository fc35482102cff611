// One intake for sends and broadcasts: what both check first (account, plan gate on the content,
// the upload it uses) and what both write alike (payload hash, lifetime, expiry, attempts, quota).
import crypto from 'node:crypto';

import type { AccountRecord } from '../accounts/account-record.js';
import type { Principal, Tenant } from '../auth/directory.js';
import type { NewMessageRow } from '../lifecycle/create-messages.js';
import type { MediaService } from '../media/media-service.js';
import { effectiveTtlSeconds, PLAN_LIMITS } from '../plans/plans.js';
import { canonicalJson, sha256Hex } from '../shared/crypto.js';
import { errors, type Problem } from '../shared/errors.js';
import type { TemplateVariant } from '../shared/template-parameters.js';
import { CHANNEL_OFFICIAL } from '../shared/vocab.js';
import { parseSendAt, sendAtProblem } from './schedule.js';
import type { SendRequest } from './send-request.js';

/**
 * An accepted send or broadcast, as its insert takes it (NewMessage and NewBroadcast add their
 * own): the fields of a new message row (lifecycle/create-messages.ts) that the request decides.
 * `contentJson` is the content as sent (a broadcast's shared content; a recipient may have its own).
 */
export type AcceptedSend = Pick<
  NewMessageRow,
  | 'id'
  | 'customerId'
  | 'chatAccountId'
  | 'apiKeyId'
  | 'externalId'
  | 'payloadHash'
  | 'channel'
  | 'contentJson'
  | 'metadataJson'
  | 'createdAt'
  | 'expiresAt'
  | 'maxAttempts'
  | 'mediaId'
> & {
  /** A scheduled send's `sendAt`: its messages are due then (null: due at once). */
  scheduledAt?: Date | null;
  /** Monthly quota of the customer's plan; null for sandbox sends, which use none. */
  quotaLimit: number | null;
};

/** The check of a template send against the account's catalog (templates/template-catalog.ts, decision 0068). */
export type TemplateSendCheck = {
  sendProblems(
    customerId: string,
    accountId: string,
    template: { name: string; language: string },
    variants: TemplateVariant[],
  ): Promise<Problem[]>;
};

/** The fields of IntakeFields (send-request.ts), as both request types have them. */
export type IntakeRequest = Pick<
  SendRequest,
  'externalId' | 'chatAccountId' | 'content' | 'metadata' | 'ttlSeconds' | 'sendAt'
>;

/** Resolves the sending account: the key's scope, the given id, or the customer's only official account. */
export function resolveSendAccount(principal: Principal, tenant: Tenant, requested: string | undefined): AccountRecord {
  const wanted = requested?.toLowerCase();
  if (principal.scopeAccountId !== null) {
    if (wanted !== undefined && wanted !== principal.scopeAccountId) throw errors.keyScopeViolation();
    const scoped = tenant.accounts.find((a) => a.id === principal.scopeAccountId);
    if (!scoped || scoped.type !== 'OFFICIAL') throw errors.invalidChatAccount();
    return scoped;
  }
  if (wanted !== undefined) {
    const account = tenant.accounts.find((a) => a.id === wanted);
    if (!account || account.type !== 'OFFICIAL') throw errors.invalidChatAccount();
    return account;
  }
  const officials = tenant.accounts.filter((a) => a.type === 'OFFICIAL');
  if (officials.length !== 1) throw errors.chatAccountRequired();
  return officials[0]!;
}

/**
 * Accepts a send or a broadcast: the sending account, the plan's rule on the content, the upload
 * it uses, then the row every insert takes. `isRepeat` tells whether a request of this kind with
 * this externalId was accepted already (a repeat's upload may be gone since, and its `sendAt`
 * past: the insert decides); `hashed` holds the request's own fields for its payload hash (a
 * send's recipient, a broadcast's recipients).
 */
export async function acceptSend(
  deps: {
    media: Pick<MediaService, 'forContent'>;
    catalog?: TemplateSendCheck;
    maxSendAttempts: number;
  },
  principal: Principal,
  tenant: Tenant,
  req: IntakeRequest,
  opts: {
    isRepeat: () => Promise<boolean>;
    hashed: Record<string, unknown>;
    /** A broadcast's recipients' own template values, each with its path; the shared ones are checked too. */
    templateVariants?: TemplateVariant[];
  },
): Promise<{ account: AccountRecord; accepted: AcceptedSend }> {
  const account = resolveSendAccount(principal, tenant, req.chatAccountId);
  if (req.content.type === 'template' && !principal.sandbox && !PLAN_LIMITS[tenant.plan].templates) {
    throw errors.templatesNotAvailable();
  }
  const { isRepeat } = opts;
  const template = req.content.type === 'template' ? req.content.template : undefined;
  if (template && deps.catalog) {
    const variants = opts.templateVariants ?? [
      { path: 'content.template.components', components: template.components },
    ];
    const problems = await deps.catalog.sendProblems(tenant.customerId, account.id, template, variants);
    // A repeat of an accepted request is answered as a repeat even if the template changed since.
    if (problems.length > 0 && !(await isRepeat())) throw errors.validation(problems);
  }
  const mediaId = await deps.media.forContent(tenant.customerId, req.content, isRepeat);
  const now = new Date();
  const ttl = effectiveTtlSeconds(tenant.plan, req.ttlSeconds);
  const expiresAt = new Date(now.getTime() + ttl * 1000);
  const scheduledAt = await checkSendAt(req.sendAt, now, expiresAt, isRepeat);
  // canonicalJson sorts keys and leaves out undefined values: the hash does not depend on either.
  const payloadHash = sha256Hex(
    canonicalJson({
      externalId: req.externalId,
      channel: CHANNEL_OFFICIAL,
      content: req.content,
      chatAccountId: account.id,
      metadata: req.metadata ?? null,
      ttlSeconds: req.ttlSeconds ?? null,
      // Absent from the hash when not scheduled, so the hashes of unscheduled sends are as before.
      sendAt: scheduledAt?.toISOString(),
      ...opts.hashed,
    }),
  );
  const accepted: AcceptedSend = {
    id: crypto.randomUUID(),
    customerId: tenant.customerId,
    chatAccountId: account.id,
    apiKeyId: principal.keyId,
    externalId: req.externalId,
    payloadHash,
    channel: CHANNEL_OFFICIAL,
    contentJson: JSON.stringify(req.content),
    metadataJson: req.metadata === undefined ? null : JSON.stringify(req.metadata),
    createdAt: now,
    expiresAt,
    scheduledAt,
    maxAttempts: deps.maxSendAttempts,
    mediaId,
    quotaLimit: principal.sandbox ? null : PLAN_LIMITS[tenant.plan].messagesPerMonth,
  };
  return { account, accepted };
}

/**
 * A scheduled send's time, or null. Its bounds depend on now, so a repeat of an accepted request
 * (same externalId) is not refused for them: the insert answers it (200 or 409) as any repeat.
 */
async function checkSendAt(
  sendAt: string | undefined,
  now: Date,
  expiresAt: Date,
  isRepeat: () => Promise<boolean>,
): Promise<Date | null> {
  if (sendAt === undefined) return null;
  const at = parseSendAt(sendAt);
  if (at === null) throw errors.validation([{ path: 'sendAt', message: 'must be a real date and time in UTC' }]);
  const problem = sendAtProblem(at, now, expiresAt);
  if (problem !== null && !(await isRepeat())) throw errors.validation([problem]);
  return at;
}
