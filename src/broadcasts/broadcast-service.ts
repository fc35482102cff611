// Broadcasts: one content to up to 5,000 recipients, accepted all at once (quota for every
// recipient, one message row each, one transaction), then sent by the ordinary dispatcher.
import crypto from 'node:crypto';

import type { AccountRecord } from '../accounts/account-record.js';
import { type Caller, readScope, requireLive, requirePlan } from '../auth/caller.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { holdUnsent } from '../lifecycle/claim.js';
import { failUnsent, lockQuotaForRefund } from '../lifecycle/fail-unsent.js';
import { CANCELLED_ERROR } from '../lifecycle/transitions.js';
import type { MediaService } from '../media/media-service.js';
import { acceptSend, type TemplateSendCheck } from '../messages/accept-send.js';
import type { Scope } from '../messages/message-store.js';
import type { Metrics } from '../metrics/metrics.js';
import { PLAN_LIMITS } from '../plans/plans.js';
import type { TemplateVariant } from '../shared/template-parameters.js';
import { type BroadcastRequest, messageExternalId } from './broadcast-request.js';
import {
  type Broadcast,
  broadcastExists,
  type BroadcastListFilter,
  findBroadcast,
  listBroadcasts,
  markBroadcastCancelled,
  toBroadcast,
  toBroadcasts,
} from './broadcast-store.js';
import { type BroadcastRows, insertBroadcast } from './insert-broadcast.js';

export type BroadcastAck = {
  broadcastId: string;
  externalId: string;
  name: string | null;
  chatAccountId: string;
  status: string;
  recipients: number;
  queued: number;
  createdAt: string;
};

/**
 * The message rows of a broadcast. Each message is due about when its account's pacing could
 * take it (one second of `throughput_mps` after another), so a large broadcast is not one block of
 * due rows ahead of every other message in the claim order: workers claim it a second or two at a
 * time and other accounts' (and this account's own) sends keep their turn. Each second is due one
 * second early, so more is due than booked and the dispatcher's own return half-way through the
 * booked schedule keeps the account's schedule without gaps. Pacing decides the real send times.
 */
export function buildMessageRows(req: BroadcastRequest, account: Pick<AccountRecord, 'throughputMps'>): BroadcastRows {
  const rows: BroadcastRows = { externalIds: [], recipients: [], contents: [], delaysSeconds: [] };
  const perSecond = Math.max(1, account.throughputMps);
  req.recipients.forEach((r, i) => {
    rows.externalIds.push(messageExternalId(req.externalId, i, r.externalId));
    rows.recipients.push(r.phoneE164);
    const own =
      r.components !== undefined && req.content.template !== undefined
        ? { ...req.content, template: { ...req.content.template, components: r.components } }
        : null;
    rows.contents.push(own === null ? null : JSON.stringify(own));
    rows.delaysSeconds.push(Math.max(0, Math.floor(i / perSecond) - 1));
  });
  return rows;
}

type BroadcastDeps = {
  db: Db;
  maxSendAttempts: number;
  media: Pick<MediaService, 'forContent'>;
  catalog?: TemplateSendCheck;
  metrics: Pick<Metrics, 'messagesAccepted'>;
};

/** The template values of a broadcast to check: each recipient's own, and the shared ones when a recipient uses them. */
function templateVariants(req: BroadcastRequest): TemplateVariant[] {
  const own = req.recipients.flatMap((r, i) =>
    r.components !== undefined ? [{ path: `recipients.${i}.components`, components: r.components }] : [],
  );
  const shared =
    own.length < req.recipients.length
      ? [{ path: 'content.template.components', components: req.content.template?.components }]
      : [];
  return [...shared, ...own];
}

/** Refusals that do not depend on the body: sandbox keys, then plans without broadcasts. */
function checkAllowed(caller: Caller): void {
  requireLive(caller);
  requirePlan(caller, 'broadcasts');
}

async function get(db: Db, scope: Scope, id: string): Promise<Broadcast> {
  return toBroadcast(db, await findBroadcast(db, scope, id));
}

async function createBroadcast(
  deps: BroadcastDeps,
  caller: Caller,
  req: BroadcastRequest,
): Promise<{ created: boolean; ack: BroadcastAck }> {
  const { db } = deps;
  const { principal, tenant } = caller;
  checkAllowed(caller);
  const { account, accepted } = await acceptSend(deps, principal, tenant, req, {
    isRepeat: () => broadcastExists(db, tenant.customerId, req.externalId),
    hashed: { name: req.name, recipients: req.recipients },
    templateVariants: templateVariants(req),
  });
  const result = await insertBroadcast(db, {
    ...accepted,
    quotaLimit: PLAN_LIMITS[tenant.plan].messagesPerMonth, // never sandbox (checkAllowed)
    name: req.name ?? null,
    rows: buildMessageRows(req, account),
  });
  if (result.created) {
    deps.metrics.messagesAccepted.inc(
      { content_type: req.content.type, plan: tenant.plan, sandbox: 'false' },
      req.recipients.length,
    );
    const ack = {
      broadcastId: result.id,
      externalId: req.externalId,
      name: req.name ?? null,
      chatAccountId: account.id,
      status: 'active',
      recipients: req.recipients.length,
      queued: req.recipients.length,
      createdAt: accepted.createdAt.toISOString(),
    };
    return { created: true, ack };
  }
  // A repeat answers the original, as it is now (every recipient was queued when it was created).
  const b = await get(db, { customerId: tenant.customerId, accountId: null }, result.id);
  return {
    created: false,
    ack: {
      broadcastId: b.broadcastId,
      externalId: b.externalId,
      name: b.name,
      chatAccountId: b.chatAccountId,
      status: b.status,
      recipients: b.recipients,
      queued: b.recipients,
      createdAt: b.createdAt,
    },
  };
}

/**
 * Cancels a broadcast: marks it (so workers fail what they claim of it later) and fails, in
 * set-based statements, its messages that are pending or queued and not held by a worker.
 * Messages a worker holds right now finish as they would have. Idempotent.
 */
async function cancelBroadcast(db: Db, caller: Caller, id: string): Promise<Broadcast> {
  // A sandbox key has no real effect anywhere: it cannot stop live messages either.
  requireLive(caller);
  const scope = readScope(caller);
  const holder = `cancel:${crypto.randomUUID()}`;
  const b = await retryTransient(() =>
    db.transaction(async (tx) => {
      const record = await findBroadcast(tx, scope, id, true);
      // The quota row first, as every insert locks it first (no deadlock with sends).
      await lockQuotaForRefund(tx, [record.customerId]);
      // A broadcast with nothing left to send is complete, not cancelled.
      await markBroadcastCancelled(tx, record.id, record.customerId);
      const held = await holdUnsent(tx, record.customerId, { broadcastId: record.id }, holder);
      await failUnsent(tx, holder, held, CANCELLED_ERROR);
      return record;
    }),
  );
  return get(db, scope, b.id);
}

export type BroadcastService = ReturnType<typeof createBroadcastService>;

export function createBroadcastService(deps: BroadcastDeps) {
  const { db } = deps;

  return {
    checkAllowed,

    /** One broadcast of the caller's (its account's, for a scoped key); none for a sandbox key. */
    get: (caller: Caller, id: string) => get(db, readScope(caller), id),

    /** The caller's broadcasts (its account's, for a scoped key), newest first, a page at a time; none for a sandbox key. */
    async list(
      caller: Caller,
      filter: BroadcastListFilter,
    ): Promise<{ broadcasts: Broadcast[]; nextCursor: string | null }> {
      const scope = readScope(caller);
      const { records, nextCursor } = await listBroadcasts(db, scope, filter);
      return { broadcasts: await toBroadcasts(db, scope.customerId, records), nextCursor };
    },

    create: (caller: Caller, req: BroadcastRequest) => createBroadcast(deps, caller, req),

    /** Cancels a broadcast (cancelBroadcast). Idempotent. */
    cancel: (caller: Caller, id: string) => cancelBroadcast(db, caller, id),
  };
}
