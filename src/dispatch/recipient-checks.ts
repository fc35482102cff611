// Refusals that depend on the recipient, before any provider call (decision 0014): a suppressed
// number gets no broadcast message and no MARKETING template; a send that required the reply
// window gets nothing once the window is closed. Refused messages fail at once, and the quota
// they were charged is given back (failUnsent, the one path for messages that never left).
import type { Logger } from 'pino';

import { admitConversationStarts, writeCrossingEvents } from '../accounts/portfolio-store.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { type ChangeTally, logChanges } from '../lifecycle/apply-transitions.js';
import type { Claimed } from '../lifecycle/claim.js';
import { failUnsent, lockQuotaForRefund } from '../lifecycle/fail-unsent.js';
import type { SendErrorDetail } from '../lifecycle/transitions.js';
import { REENGAGEMENT_MESSAGE } from '../provider/error-map.js';
import { isReplyWindowOpen, lastInboundAmong } from '../senders/reply-window.js';
import { blockedMarketOf } from '../shared/markets.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';
import { suppressedAmong, suppressionKey } from '../suppressions/suppression-store.js';
import type { TemplateCategories } from '../templates/template-categories.js';
import { templateStateKey, templateStatusesAmong, UNSENDABLE_TEMPLATE_STATUSES } from '../templates/template-status.js';

const OPTED_OUT: SendErrorDetail = {
  code: SEND_ERROR_CODES.RECIPIENT_OPTED_OUT,
  message:
    'The recipient opted out: the number is on the suppression list of this chat account, so broadcasts and marketing templates are not sent to it',
};
const WINDOW_CLOSED: SendErrorDetail = { code: SEND_ERROR_CODES.REENGAGEMENT_REQUIRED, message: REENGAGEMENT_MESSAGE };
/** Every content but a template is free-form: it needs the recipient's reply window. */
const isFreeForm = (m: Claimed) => m.content.type !== 'template';
const UNSENDABLE = new Set<string>(UNSENDABLE_TEMPLATE_STATUSES);
const notApproved = (status: string): SendErrorDetail => ({
  code: SEND_ERROR_CODES.TEMPLATE_NOT_APPROVED,
  message: `The template is ${status} at the provider (its last status webhook), so it cannot be sent`,
});

export type RecipientChecks = {
  db: Db;
  log: Logger;
  categories: Pick<TemplateCategories, 'categoryOf'>;
  /** MARKETING_BLOCKED_MARKETS: where a MARKETING template fails before any provider call. */
  blockedMarkets: readonly string[];
  /** Counts portfolio-limit outcomes (decision 0044): sends refused, alert crossings by level. */
  onPortfolioLimit?: (what: { refused: number; crossings: number[] }) => void;
  /** Told of the messages failed here (the worker's activity line). */
  tally?: ChangeTally;
};

const marketBlocked = (market: string): SendErrorDetail => ({
  code: SEND_ERROR_CODES.MARKETING_MARKET_BLOCKED,
  message: `The provider refuses marketing templates to this market (${market}, in MARKETING_BLOCKED_MARKETS): send a utility template, or reach the recipient another way`,
});

/** What each refused message fails with (messages not in the map may be sent). */
async function findRefusals(
  deps: RecipientChecks,
  live: Claimed[],
  now: Date,
): Promise<{ refusals: Map<string, SendErrorDetail>; starts: Claimed[] }> {
  const refusals = new Map<string, SendErrorDetail>();
  const pair = (m: Claimed) => ({ accountId: m.chatAccountId, phone: m.recipient });
  // A template the provider paused or disabled (decision 0015).
  const templated = live.filter((m) => m.content.template !== undefined);
  const statuses = await templateStatusesAmong(
    deps.db,
    templated.map((m) => ({
      accountId: m.chatAccountId,
      name: m.content.template!.name,
      language: m.content.template!.language,
    })),
  );
  for (const m of templated) {
    const status = statuses.get(
      templateStateKey(m.chatAccountId, m.content.template!.name, m.content.template!.language),
    );
    if (status && UNSENDABLE.has(status)) refusals.set(m.id, notApproved(status));
  }
  const listed = live.filter((m) => m.broadcastId !== null || m.content.type === 'template');
  const suppressed = await suppressedAmong(deps.db, listed.map(pair));
  for (const m of listed) {
    if (refusals.has(m.id) || !suppressed.has(suppressionKey(m.chatAccountId, m.recipient))) continue;
    const t = m.content.template;
    const marketing =
      m.broadcastId === null &&
      t !== undefined &&
      (await deps.categories.categoryOf(m.customerId, m.chatAccountId, t.name, t.language)) === 'MARKETING';
    if (m.broadcastId !== null || marketing) refusals.set(m.id, OPTED_OUT);
  }
  // A MARKETING template to a market where the provider refuses them (its category asked only
  // then); after the opt-out, so a number that opted out is told so whatever its market.
  for (const m of templated) {
    const market = refusals.has(m.id) ? null : blockedMarketOf(m.recipient, deps.blockedMarkets);
    const t = m.content.template!;
    if (market && (await deps.categories.categoryOf(m.customerId, m.chatAccountId, t.name, t.language)) === 'MARKETING')
      refusals.set(m.id, marketBlocked(market));
  }
  const windowed = live.filter((m) => m.requireReplyWindow && !refusals.has(m.id) && isFreeForm(m));
  // One read of the reply windows serves both checks: sends that require it, and templates (a
  // template to a closed window starts a conversation: the portfolio's messaging limit).
  const startable = templated.filter((m) => !refusals.has(m.id));
  const last = await lastInboundAmong(deps.db, [...windowed, ...startable].map(pair));
  const windowOpen = (m: Claimed) =>
    isReplyWindowOpen(last.get(suppressionKey(m.chatAccountId, m.recipient)) ?? null, now);
  for (const m of windowed) if (!windowOpen(m)) refusals.set(m.id, WINDOW_CLOSED);
  const starts = startable.filter((m) => !windowOpen(m));
  return { refusals, starts };
}

const limitReached = (limit: number): SendErrorDetail => ({
  code: SEND_ERROR_CODES.PORTFOLIO_LIMIT_REACHED,
  message: `The messaging limit of this account's business portfolio is reached: it started conversations with ${limit} unique recipients in the last 24 hours, all numbers of the portfolio together, so the provider would not deliver this template; it can be sent again when earlier conversation starts are 24 hours old or the limit rises`,
});

/** Fails the claimed live messages their recipient rules out, quota given back; returns the others. */
export async function failRefusedRecipients(
  deps: RecipientChecks,
  workerId: string,
  live: Claimed[],
  now = new Date(),
): Promise<Claimed[]> {
  if (live.length === 0) return live;
  const { refusals, starts } = await findRefusals(deps, live, now);
  if (starts.length > 0) await admitStarts(deps, starts, refusals, now);
  if (refusals.size === 0) return live;
  const refused = live.filter((m) => refusals.has(m.id));
  const changes = await retryTransient(() =>
    deps.db.transaction(async (tx) => {
      // Quota rows first and in customer order, as inserts lock them (no deadlock); then the one
      // path for messages that never left (failed, event, upload released, quota given back).
      await lockQuotaForRefund(
        tx,
        refused.map((m) => m.customerId),
        now,
      );
      const applied = [];
      for (const error of new Set(refusals.values())) {
        const these = refused.filter((m) => refusals.get(m.id) === error);
        applied.push(...(await failUnsent(tx, workerId, these, error, now)));
      }
      return applied;
    }),
  );
  logChanges(deps.log, changes, 'recipient refused before sending', deps.tally);
  return live.filter((m) => !refusals.has(m.id));
}

/**
 * The business-initiated sends go through their portfolio's messaging limit (decision 0044), in
 * one transaction per batch whose portfolio rows serialise every process's admissions; those
 * beyond it join the refusals, and the thresholds crossed write their events in the same commit.
 */
async function admitStarts(
  deps: RecipientChecks,
  starts: Claimed[],
  refusals: Map<string, SendErrorDetail>,
  now: Date,
): Promise<void> {
  // Oldest first: a backlog is admitted in the order it was accepted.
  const ordered = [...starts].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const admission = await retryTransient(() =>
    deps.db.transaction(async (tx) => {
      const a = await admitConversationStarts(
        tx,
        ordered.map((m) => ({ messageId: m.id, accountId: m.chatAccountId, recipient: m.recipient })),
      );
      await writeCrossingEvents(tx, a.crossings, now);
      return a;
    }),
  );
  const details = new Map<number, SendErrorDetail>();
  for (const [id, { limit }] of admission.refused) {
    if (!details.has(limit)) details.set(limit, limitReached(limit));
    refusals.set(id, details.get(limit)!);
  }
  for (const c of admission.crossings)
    deps.log.warn(
      { portfolio: c.portfolioKey, thresholdPercent: c.level, used: c.used, limit: c.limit },
      'a business portfolio reached a threshold of its messaging limit',
    );
  deps.onPortfolioLimit?.({ refused: admission.refused.size, crossings: admission.crossings.map((c) => c.level) });
}
