// Before a live reply or reaction is sent, the provider's id of the message it refers to must be
// known (the payload's context.message_id, or the reaction's message_id). An inbound message's
// is known from acceptance; ours once it was sent. A reply to one of ours not sent yet waits for
// it (put back, due again shortly after the target's own due time but within 5 s, no attempt
// used); one whose
// target failed unsent or was purged fails at once with REPLY_TARGET_UNAVAILABLE, without a
// provider call and with its quota given back (decision 0032).
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyTransitions, type ChangeTally, logChanges } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import { failUnsent, lockQuotaForRefund } from '../lifecycle/fail-unsent.js';
import type { SendErrorDetail, Transition } from '../lifecycle/transitions.js';
import * as transition from '../lifecycle/transitions.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';

/** How long after its target's due time a waiting reply looks again… */
export const TARGET_WAIT_MS = 500;
/** …and at most this long from now (a scheduled target may be cancelled long before its time). */
export const MAX_TARGET_WAIT_MS = 5000;

const UNAVAILABLE: SendErrorDetail = {
  code: SEND_ERROR_CODES.REPLY_TARGET_UNAVAILABLE,
  message:
    'The message this one replies or reacts to was never sent (it failed) or no longer exists, so the provider cannot be told which message is meant',
};

type TargetRow = { id: string; status: string; provider_message_id: string | null; due_at: Date | string };

/**
 * Resolves the targets of the claimed live messages: returns the ones that may be sent now (with
 * their target's provider id filled in) and when the ones put back are due again.
 */
export async function resolveReplyTargets(
  deps: { db: Db; log: Logger; tally?: ChangeTally },
  workerId: string,
  live: Claimed[],
  now = new Date(),
): Promise<{ ready: Claimed[]; nextDueAt: Date | null }> {
  const pending = live.filter((m) => m.replyTarget?.messageId && !m.replyTarget.providerMessageId);
  if (pending.length === 0) return { ready: live, nextDueAt: null };
  const rows = await deps.db.query<TargetRow>(
    `SELECT id, status, provider_message_id, due_at FROM messages WHERE id = ANY($1::uuid[])`,
    [[...new Set(pending.map((m) => m.replyTarget!.messageId!))]],
  );
  const targets = new Map(rows.map((r) => [r.id, r]));
  const waits: Transition[] = [];
  const failing: Claimed[] = [];
  const held = new Set<string>();
  for (const m of pending) {
    const t = targets.get(m.replyTarget!.messageId!);
    if (t?.provider_message_id) {
      m.replyTarget = { ...m.replyTarget, providerMessageId: t.provider_message_id };
      continue;
    }
    held.add(m.id);
    if (t && (t.status === 'pending' || t.status === 'queued')) {
      const ahead = Math.max(new Date(t.due_at).getTime() - now.getTime(), 0) + TARGET_WAIT_MS;
      waits.push(transition.wait(m, now, new Date(now.getTime() + Math.min(ahead, MAX_TARGET_WAIT_MS))));
    } else failing.push(m);
  }
  if (held.size === 0) return { ready: live, nextDueAt: null };
  const changes = await retryTransient(() =>
    deps.db.transaction(async (tx) => {
      if (failing.length > 0)
        await lockQuotaForRefund(
          tx,
          failing.map((m) => m.customerId),
          now,
        );
      return [
        ...(await failUnsent(tx, workerId, failing, UNAVAILABLE, now)),
        ...(await applyTransitions(tx, workerId, waits)),
      ];
    }),
  );
  logChanges(deps.log, changes, 'reply target not sent yet, or unavailable', deps.tally);
  const nextDueAt = waits.reduce<Date | null>((min, w) => (!min || w.nextDueAt! < min ? w.nextDueAt : min), null);
  return { ready: live.filter((m) => !held.has(m.id)), nextDueAt };
}
