// Accepting a send: account resolution, plan gates, then the group-committed idempotent insert.
import type { Caller } from '../auth/caller.js';
import type { Principal } from '../auth/directory.js';
import type { Db } from '../db/db.js';
import { DatabaseDeadlineError } from '../db/db-errors.js';
import type { MediaService } from '../media/media-service.js';
import type { Metrics } from '../metrics/metrics.js';
import { errors } from '../shared/errors.js';
import { createGroupCommit } from '../shared/group-commit.js';
import { phoneForUserId } from '../suppressions/recipient-keys.js';
import { acceptSend, type TemplateSendCheck } from './accept-send.js';
import { type Ack, insertBatch, type InsertOutcome, type NewMessage } from './insert-batch.js';
import { messageExists } from './message-store.js';
import { type Conversation, findReplyTarget } from './reply-target.js';
import type { SendRequest } from './send-request.js';

/** `chatAccountId`: the account the message goes from (for logs; not part of the answer). */
export type SendResult = { created: boolean; ack: Ack; chatAccountId: string };

export type SendService = ReturnType<typeof createSendService>;

export function createSendService(deps: {
  db: Db;
  maxSendAttempts: number;
  media: Pick<MediaService, 'forContent'>;
  /** The template catalog: template sends are checked against it at accept (decision 0068). */
  catalog?: TemplateSendCheck;
  metrics: Pick<Metrics, 'messagesAccepted'>;
  /**
   * The longest a batch's insert may take before its requests are answered 503 database_unavailable
   * and the next batch goes on: a backstop above the database seam's own bound (connect + transaction).
   */
  batchDeadlineMs?: number;
}) {
  const { db } = deps;
  const batchDeadlineMs = deps.batchDeadlineMs;
  const group = createGroupCommit<NewMessage, InsertOutcome>((items) => insertBatch(db, items), {
    maxBatch: 500,
    // One batch at a time: concurrent batches would hold the same customers' quota rows and
    // only queue behind each other (PGlite is one connection anyway).
    maxInFlight: 1,
    ...(batchDeadlineMs === undefined
      ? {}
      : { deadline: { ms: batchDeadlineMs, error: () => new DatabaseDeadlineError(batchDeadlineMs) } }),
  });

  return {
    async send(caller: Caller, req: SendRequest): Promise<SendResult> {
      const { principal, tenant } = caller;
      const isRepeat = () => messageExists(db, tenant.customerId, req.externalId);
      const { accepted, account } = await acceptSend(deps, principal, tenant, req, {
        isRepeat,
        // Only set fields are hashed: requests without them keep the hash they always had.
        hashed: {
          to: req.to,
          sandbox: principal.sandbox,
          requireReplyWindow: req.requireReplyWindow || undefined,
          replyTo: req.replyTo,
        },
      });
      // A user id: the number this account knows for it, else the id itself (decision 0036).
      const userId = req.to.type === 'userId' ? req.to.userId! : null;
      const recipient =
        userId === null ? req.to.phoneE164! : ((await phoneForUserId(db, account.id, userId)) ?? userId);
      const conversation = {
        customerId: tenant.customerId,
        accountId: accepted.chatAccountId,
        phone: recipient,
        userId,
      };
      const outcome = await group.submit({
        ...accepted,
        recipient,
        recipientUserId: userId,
        sandbox: principal.sandbox,
        requireReplyWindow: req.requireReplyWindow === true,
        replyTargetJson: await replyTargetJson(db, principal, conversation, req, isRepeat),
      });
      switch (outcome.kind) {
        case 'created':
          deps.metrics.messagesAccepted.inc({
            content_type: req.content.type,
            plan: tenant.plan,
            sandbox: String(principal.sandbox),
          });
          return { created: true, ack: outcome.ack, chatAccountId: accepted.chatAccountId };
        case 'repeat':
          return { created: false, ack: outcome.ack, chatAccountId: accepted.chatAccountId };
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
    /** How long the batch being written has been in flight (ms; 0 when none is): /readyz's accept-path check. */
    oldestBatchMs: () => group.oldestInFlightMs(),
  };
}

/**
 * The message a send replies to (replyTo) or reacts to (a reaction), as stored JSON; null when
 * it names none. A repeat of an accepted request is not refused when its target is gone since
 * (purged): the insert answers it as any repeat (200 or 409).
 */
async function replyTargetJson(
  db: Db,
  principal: Principal,
  conversation: Conversation,
  req: SendRequest,
  isRepeat: () => Promise<boolean>,
): Promise<string | null> {
  const [ref, path] = req.replyTo
    ? [req.replyTo, 'replyTo']
    : req.content.type === 'reaction' && req.content.reaction
      ? [req.content.reaction, 'content.reaction']
      : [null, ''];
  if (ref === null) return null;
  try {
    return JSON.stringify(await findReplyTarget(db, principal, conversation, ref, path));
  } catch (err) {
    if (await isRepeat()) return null;
    throw err;
  }
}
