// Accepting a send: account resolution, plan gates, then the group-committed idempotent insert.
import crypto from 'node:crypto';

import type { AccountRecord } from '../accounts/account-record.js';
import type { Principal, Tenant } from '../auth/directory.js';
import type { Db } from '../db/db.js';
import type { MediaService } from '../media/media-service.js';
import type { Metrics } from '../metrics/metrics.js';
import { effectiveTtlSeconds, PLAN_LIMITS } from '../plans/plans.js';
import { canonicalJson, sha256Hex } from '../shared/crypto.js';
import { errors } from '../shared/errors.js';
import { createGroupCommit } from '../shared/group-commit.js';
import { CHANNEL_OFFICIAL } from '../shared/vocab.js';
import { type Ack, insertBatch, type InsertOutcome, type NewMessage } from './insert-batch.js';
import type { SendRequest } from './send-request.js';

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
 * What every send checks first, POST /messages and broadcasts alike: the sending account, the
 * plan's rule on the content, and the upload it uses (null when none). `isRepeat` tells whether
 * the request repeats an accepted one (its upload may be gone since; the insert decides).
 */
export async function admitContent(
  media: Pick<MediaService, 'forContent'>,
  principal: Principal,
  tenant: Tenant,
  req: { chatAccountId?: string; content: SendRequest['content'] },
  isRepeat: () => Promise<boolean>,
): Promise<{ account: AccountRecord; mediaId: string | null }> {
  const account = resolveSendAccount(principal, tenant, req.chatAccountId);
  if (req.content.type === 'template' && !principal.sandbox && !PLAN_LIMITS[tenant.plan].templates) {
    throw errors.templatesNotAvailable();
  }
  return { account, mediaId: await media.forContent(tenant.customerId, req.content, isRepeat) };
}

/** `chatAccountId`: the account the message goes from (for logs; not part of the answer). */
export type SendResult = { created: boolean; ack: Ack; chatAccountId: string };

export type SendService = ReturnType<typeof createSendService>;

export function createSendService(deps: {
  db: Db;
  maxSendAttempts: number;
  media: Pick<MediaService, 'forContent'>;
  metrics: Pick<Metrics, 'messagesAccepted'>;
}) {
  const { db, maxSendAttempts } = deps;
  const group = createGroupCommit<NewMessage, InsertOutcome>((items) => insertBatch(db, items), {
    maxBatch: 500,
    // One batch at a time: concurrent batches would hold the same customers' quota rows and
    // only queue behind each other (PGlite is one connection anyway).
    maxInFlight: 1,
  });

  return {
    async send(principal: Principal, tenant: Tenant, req: SendRequest): Promise<SendResult> {
      const { account, mediaId } = await admitContent(
        deps.media,
        principal,
        tenant,
        req,
        async () =>
          (
            await db.query('SELECT 1 FROM messages WHERE customer_id = $1 AND external_id = $2', [
              tenant.customerId,
              req.externalId,
            ])
          ).length > 0,
      );

      const now = new Date();
      const ttl = effectiveTtlSeconds(tenant.plan, req.ttlSeconds);
      const payloadHash = sha256Hex(
        canonicalJson({
          externalId: req.externalId,
          channel: CHANNEL_OFFICIAL,
          to: req.to,
          content: req.content,
          chatAccountId: account.id,
          metadata: req.metadata ?? null,
          ttlSeconds: req.ttlSeconds ?? null,
          sandbox: principal.sandbox,
        }),
      );
      const outcome = await group.submit({
        id: crypto.randomUUID(),
        customerId: tenant.customerId,
        chatAccountId: account.id,
        apiKeyId: principal.keyId,
        externalId: req.externalId,
        payloadHash,
        recipient: req.to.phoneE164,
        channel: CHANNEL_OFFICIAL,
        contentJson: JSON.stringify(req.content),
        metadataJson: req.metadata === undefined ? null : JSON.stringify(req.metadata),
        sandbox: principal.sandbox,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ttl * 1000),
        maxAttempts: maxSendAttempts,
        mediaId,
        quotaLimit: principal.sandbox ? null : PLAN_LIMITS[tenant.plan].messagesPerMonth,
      });
      switch (outcome.kind) {
        case 'created':
          deps.metrics.messagesAccepted.inc({
            content_type: req.content.type,
            plan: tenant.plan,
            sandbox: String(principal.sandbox),
          });
          return { created: true, ack: outcome.ack, chatAccountId: account.id };
        case 'repeat':
          return { created: false, ack: outcome.ack, chatAccountId: account.id };
        case 'conflict':
          throw errors.conflict();
        case 'quota_exceeded':
          throw errors.quotaExceeded(outcome.limit, outcome.used, outcome.resetsAt);
        case 'revoked':
          throw errors.invalidKey();
        case 'media_gone':
          throw errors.invalidMedia('media_not_found');
        case 'error':
          throw outcome.error;
      }
    },

    /** Waits for batches in flight (graceful shutdown). */
    drain: () => group.drain(),
  };
}
