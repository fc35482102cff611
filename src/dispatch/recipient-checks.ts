// Refusals that depend on the recipient, before any provider call (decision 0014): a suppressed
// number gets no broadcast message and no MARKETING template; a send that required the reply
// window gets nothing once the window is closed. Refused messages fail at once, and the quota
// they were charged is given back (refundUnsentQuota, the one refund path).
import type { Logger } from 'pino';

import { lockQuotaForRefund, refundUnsentQuota } from '../broadcasts/cancel-messages.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { applyTransitions, logChanges } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import type { SendErrorDetail } from '../lifecycle/transitions.js';
import * as transition from '../lifecycle/transitions.js';
import { quotaMonth } from '../plans/plans.js';
import { REENGAGEMENT_MESSAGE } from '../provider/error-map.js';
import { isReplyWindowOpen, lastInboundAmong } from '../senders/reply-window.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';
import { suppressedAmong, suppressionKey } from '../suppressions/suppression-store.js';
import type { TemplateCategories } from '../templates/template-categories.js';

const OPTED_OUT: SendErrorDetail = {
  code: SEND_ERROR_CODES.RECIPIENT_OPTED_OUT,
  message:
    'The recipient opted out: the number is on the suppression list of this chat account, so broadcasts and marketing templates are not sent to it',
};
const WINDOW_CLOSED: SendErrorDetail = { code: SEND_ERROR_CODES.REENGAGEMENT_REQUIRED, message: REENGAGEMENT_MESSAGE };
const FREE_FORM = new Set(['text', 'image', 'document']);

export type RecipientChecks = { db: Db; log: Logger; categories: Pick<TemplateCategories, 'categoryOf'> };

/** What each refused message fails with (messages not in the map may be sent). */
async function findRefusals(deps: RecipientChecks, live: Claimed[], now: Date): Promise<Map<string, SendErrorDetail>> {
  const refusals = new Map<string, SendErrorDetail>();
  const pair = (m: Claimed) => ({ accountId: m.chatAccountId, phone: m.recipient });
  const listed = live.filter((m) => m.broadcastId !== null || m.content.type === 'template');
  const suppressed = await suppressedAmong(deps.db, listed.map(pair));
  for (const m of listed) {
    if (!suppressed.has(suppressionKey(m.chatAccountId, m.recipient))) continue;
    const t = m.content.template;
    const marketing =
      m.broadcastId === null &&
      t !== undefined &&
      (await deps.categories.categoryOf(m.customerId, m.chatAccountId, t.name, t.language)) === 'MARKETING';
    if (m.broadcastId !== null || marketing) refusals.set(m.id, OPTED_OUT);
  }
  const windowed = live.filter((m) => m.requireReplyWindow && !refusals.has(m.id) && FREE_FORM.has(m.content.type));
  const last = await lastInboundAmong(deps.db, windowed.map(pair));
  for (const m of windowed)
    if (!isReplyWindowOpen(last.get(suppressionKey(m.chatAccountId, m.recipient)) ?? null, now))
      refusals.set(m.id, WINDOW_CLOSED);
  return refusals;
}

/** Fails the claimed live messages their recipient rules out, quota given back; returns the others. */
export async function failRefusedRecipients(
  deps: RecipientChecks,
  workerId: string,
  live: Claimed[],
  now = new Date(),
): Promise<Claimed[]> {
  if (live.length === 0) return live;
  const refusals = await findRefusals(deps, live, now);
  if (refusals.size === 0) return live;
  const refused = live.filter((m) => refusals.has(m.id));
  const changes = await retryTransient(() =>
    deps.db.transaction(async (tx) => {
      // Quota rows first and in customer order, as inserts lock them (no deadlock).
      const customers = [...new Set(refused.map((m) => m.customerId))].sort();
      for (const customerId of customers) await lockQuotaForRefund(tx, { customerId }, now);
      const applied = await applyTransitions(
        tx,
        workerId,
        refused.map((m) => transition.failed(m, now, refusals.get(m.id)!, false)),
      );
      const done = new Set(applied.map((c) => c.messageId));
      // Never tried, so never reached the provider: their charge is given back, per month charged.
      const charges = new Map<string, { customerId: string; createdAt: Date; count: number }>();
      for (const m of refused.filter((r) => done.has(r.id) && r.attemptCount === 0)) {
        const k = `${m.customerId}/${quotaMonth(m.createdAt).month}`;
        const c = charges.get(k) ?? { customerId: m.customerId, createdAt: m.createdAt, count: 0 };
        c.count++;
        charges.set(k, c);
      }
      for (const c of charges.values()) await refundUnsentQuota(tx, c, c.count, now);
      return applied;
    }),
  );
  logChanges(deps.log, changes, 'recipient refused before sending');
  return live.filter((m) => !refusals.has(m.id));
}
