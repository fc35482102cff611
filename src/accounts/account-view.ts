// The public shape of a chat account (GET /chat-accounts), capabilities derived from type and plan.
import type { Plan } from '../plans/plans.js';
import { PLAN_LIMITS } from '../plans/plans.js';
import { CHANNEL_DIRECT, CHANNEL_OFFICIAL } from '../shared/vocab.js';
import type { AccountRecord } from './account-record.js';
import type { MessagingLimitView } from './portfolio-store.js';

/** What the service can do today, whatever the account. Flip a flag when its capability ships. */
export const SERVICE_FEATURES = {
  templateCatalog: true,
  statusWebhooks: true,
} as const;

export type PublicAccount = ReturnType<typeof toPublicAccount>;

/** The portfolio's limit and use without the operator's portfolio label. */
const publicLimit = ({ portfolioId: _label, ...limit }: MessagingLimitView) => limit;

/**
 * `messagingLimit`: the portfolio's limit and use (decision 0044), shown when the caller read it
 * (OFFICIAL accounts only); the operator's portfolioId only in the operator's view.
 */
export function toPublicAccount(
  a: AccountRecord,
  plan: Plan,
  publicBaseUrl: string,
  messagingLimit?: MessagingLimitView,
) {
  const official = a.type === 'OFFICIAL';
  const templatesInPlan = PLAN_LIMITS[plan].templates;
  const capability = (supported: boolean, enabled: boolean) => ({ supported, enabled: supported && enabled });
  // The kinds added beyond the spec (decision 0032): official accounts, every plan, like text and
  // media. Replies and reactions reach inbound messages only where the plan keeps them (the inbox).
  const freeForm = capability(official, true);
  const toEarlier = { ...freeForm, inboundMessages: freeForm.enabled && PLAN_LIMITS[plan].inbox };
  return {
    id: a.id,
    type: a.type,
    status: a.status,
    phoneNumber: a.phoneNumber,
    displayName: a.displayName,
    connectedAt: (a.connectedAt ?? a.createdAt).toISOString(),
    channel: official ? CHANNEL_OFFICIAL : CHANNEL_DIRECT,
    lastErrorCode: a.lastErrorCode,
    official: official
      ? {
          // Required to link or change an OFFICIAL account (account-admin.ts): never null here.
          phoneNumberId: a.phoneNumberId as string,
          wabaId: a.wabaId as string,
          wabaVerification: a.wabaVerification ?? 'unverifiable',
          verifiedName: a.verifiedName,
        }
      : null,
    sendPolicy: official
      ? {
          mode: a.sendPolicyMode ?? 'GLOBAL',
          testRecipientsCount:
            a.sendPolicyMode === 'GLOBAL' || a.sendPolicyMode === null ? null : a.testRecipients.length,
        }
      : null,
    webhook: official
      ? {
          integrationId: a.integrationId,
          callbackUrl: `${publicBaseUrl}/provider/webhooks/${a.integrationId !== null ? `integrations/${encodeURIComponent(a.integrationId)}` : 'app'}`,
        }
      : null,
    ...(messagingLimit !== undefined && official ? { messagingLimit: publicLimit(messagingLimit) } : {}),
    capabilities: {
      text: capability(true, true),
      media: capability(true, true),
      template: capability(official, templatesInPlan),
      namedTemplateParameters: { ...capability(official, templatesInPlan), scope: 'body' as const },
      templateManagement: {
        ...capability(official, templatesInPlan && a.hasManagementToken && SERVICE_FEATURES.templateCatalog),
        verifiedAt: a.templateManagementVerifiedAt?.toISOString() ?? null,
      },
      statusWebhooks: capability(official, SERVICE_FEATURES.statusWebhooks),
      audio: freeForm,
      video: freeForm,
      sticker: freeForm,
      location: freeForm,
      contacts: freeForm,
      interactive: freeForm,
      reaction: toEarlier,
      replyTo: toEarlier,
    },
  };
}

/**
 * The operator's view of an account (operator API, one account or a customer's list): the public
 * shape plus its customer, its send rate and the prober's state (`null` unless a rejected token is
 * being re-verified; `nextAt` is when the next probe is due). No secrets.
 */
export function toOperatorAccount(
  a: AccountRecord,
  plan: Plan,
  publicBaseUrl: string,
  messagingLimit: MessagingLimitView | undefined,
) {
  return {
    ...toPublicAccount(a, plan, publicBaseUrl, messagingLimit),
    customerId: a.customerId,
    portfolioId: messagingLimit?.portfolioId ?? null,
    throughputMps: a.throughputMps,
    sendPace: a.sendPace,
    marketingMessages: {
      enabled: a.marketingMessagesApi,
      refusedUntil: a.marketingMessagesRefusedUntil?.toISOString() ?? null,
    },
    probe: a.probeNextAt ? { nextAt: a.probeNextAt.toISOString(), attempts: a.probeAttempts } : null,
  };
}
