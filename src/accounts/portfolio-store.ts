// The messaging limit's SQL (decision 0044): admitting conversation starts against a portfolio's
// limit, its use as the account reads show it, and the limit as the provider or the operator sets it.
import type { Queryable } from '../db/db.js';
import { writeEvents } from '../lifecycle/write-events.js';
import {
  ALERT_LEVELS,
  alertLevelOf,
  DEFAULT_MESSAGING_LIMIT,
  MESSAGING_LIMIT_WINDOW_HOURS,
  PORTFOLIO_KEY_SQL,
  tierOfLimit,
} from '../shared/messaging-tiers.js';

const LIVE = `started_at > now() - interval '${MESSAGING_LIMIT_WINDOW_HOURS} hours'`;

/** A business-initiated send to admit: its message, account and recipient key. */
export type ConversationStart = { messageId: string; accountId: string; recipient: string };

/** A portfolio whose use crossed an alert level (80 or 100 %) up. */
export type LimitCrossing = { portfolioKey: string; level: number; used: number; limit: number; source: string };

export type Admission = {
  /** Messages beyond their portfolio's limit, with the limit they met. */
  refused: Map<string, { limit: number; used: number }>;
  crossings: LimitCrossing[];
};

type Portfolio = {
  key: string;
  limit: number | null;
  /** The limit was set (provider or operator): sends beyond it are refused. The default is only assumed. */
  enforced: boolean;
  source: string;
  alertLevel: number;
  used: number;
  live: Set<string>;
};

/**
 * Locks the portfolios of these accounts (created at the default limit when new), in key order:
 * concurrent admissions of one portfolio, in any process, run one after the other.
 */
async function lockPortfolios(tx: Queryable, accountIds: string[]) {
  const rows = await tx.query<{
    account_id: string;
    portfolio_key: string;
    messaging_limit: number | null;
    limit_source: string;
    alert_level: number;
  }>(
    `WITH acc AS (SELECT a.id, ${PORTFOLIO_KEY_SQL} AS key FROM chat_accounts a WHERE a.id = ANY($1::uuid[])),
     locked AS (
       INSERT INTO messaging_portfolios AS p (portfolio_key)
       SELECT DISTINCT key FROM acc ORDER BY 1
       ON CONFLICT (portfolio_key) DO UPDATE SET updated_at = now()
       RETURNING p.portfolio_key, p.messaging_limit, p.limit_source, p.alert_level)
     SELECT acc.id AS account_id, l.portfolio_key, l.messaging_limit, l.limit_source, l.alert_level
       FROM acc JOIN locked l ON l.portfolio_key = acc.key`,
    [[...new Set(accountIds)]],
  );
  return new Map(rows.map((r) => [r.account_id, r]));
}

/** Each limited portfolio's use now, and which of the given recipients already count. */
async function readUse(
  tx: Queryable,
  asked: { key: string; recipient: string }[],
): Promise<Map<string, { used: number; live: Set<string> }>> {
  const rows = await tx.query<{ key: string; used: number; live: string[] }>(
    `SELECT t.key,
            (SELECT count(*)::int FROM portfolio_recipients r WHERE r.portfolio_key = t.key AND r.${LIVE}) AS used,
            ARRAY(SELECT r.recipient FROM portfolio_recipients r
                   WHERE r.portfolio_key = t.key AND r.recipient = ANY(t.recipients) AND r.${LIVE}) AS live
       FROM (SELECT key, array_agg(recipient) AS recipients
               FROM unnest($1::text[], $2::text[]) AS u(key, recipient) GROUP BY key) t`,
    [asked.map((a) => a.key), asked.map((a) => a.recipient)],
  );
  return new Map(rows.map((r) => [r.key, { used: r.used, live: new Set(r.live) }]));
}

/**
 * Admits business-initiated sends against their portfolio's limit, in the given order, inside the
 * caller's transaction: a recipient already counted in the last 24 hours (or admitted earlier in
 * the batch) is admitted without counting again; a new one counts while the portfolio has room;
 * the others are refused. A portfolio at the assumed default (no provider or operator word yet)
 * counts and alerts but refuses nothing: spec sends (a 5,000-recipient broadcast) keep their
 * outcome until the limit is known. Unlimited portfolios admit everything and record nothing.
 */
export async function admitConversationStarts(tx: Queryable, starts: ConversationStart[]): Promise<Admission> {
  const admission: Admission = { refused: new Map(), crossings: [] };
  if (starts.length === 0) return admission;
  const locked = await lockPortfolios(
    tx,
    starts.map((s) => s.accountId),
  );
  const limited = starts.filter((s) => {
    const p = locked.get(s.accountId);
    return p !== undefined && p.messaging_limit !== null;
  });
  if (limited.length === 0) return admission;
  const use = await readUse(
    tx,
    limited.map((s) => ({ key: locked.get(s.accountId)!.portfolio_key, recipient: s.recipient })),
  );
  const portfolios = new Map<string, Portfolio>();
  for (const s of limited) {
    const row = locked.get(s.accountId)!;
    if (!portfolios.has(row.portfolio_key)) {
      const u = use.get(row.portfolio_key) ?? { used: 0, live: new Set<string>() };
      portfolios.set(row.portfolio_key, {
        key: row.portfolio_key,
        limit: row.messaging_limit,
        enforced: row.limit_source !== 'default',
        source: row.limit_source,
        alertLevel: row.alert_level,
        ...u,
      });
    }
  }
  const started: { key: string; recipient: string }[] = [];
  for (const s of limited) {
    const p = portfolios.get(locked.get(s.accountId)!.portfolio_key)!;
    if (p.live.has(s.recipient)) continue;
    if (p.enforced && p.used >= p.limit!) {
      admission.refused.set(s.messageId, { limit: p.limit!, used: p.used });
      continue;
    }
    p.used++;
    p.live.add(s.recipient);
    started.push({ key: p.key, recipient: s.recipient });
  }
  if (started.length > 0)
    await tx.query(
      `INSERT INTO portfolio_recipients AS r (portfolio_key, recipient, started_at)
       SELECT k, rc, now() FROM unnest($1::text[], $2::text[]) AS t(k, rc) ORDER BY 1, 2
       ON CONFLICT (portfolio_key, recipient) DO UPDATE SET started_at = EXCLUDED.started_at`,
      [started.map((s) => s.key), started.map((s) => s.recipient)],
    );
  await recordAlertLevels(tx, [...portfolios.values()], admission);
  return admission;
}

/**
 * Moves each portfolio's alert level to where its use is now: up (a crossing, one event) or down
 * (the window moved on: the next rise alerts again). Nothing is written when it stays.
 */
async function recordAlertLevels(tx: Queryable, portfolios: Portfolio[], admission: Admission) {
  const moved = portfolios
    .map((p) => ({ p, level: alertLevelOf(p.used, p.limit) }))
    .filter(({ p, level }) => level !== p.alertLevel);
  if (moved.length === 0) return;
  await tx.query(
    `UPDATE messaging_portfolios p SET alert_level = t.level
       FROM unnest($1::text[], $2::int[]) AS t(key, level) WHERE p.portfolio_key = t.key`,
    [moved.map((m) => m.p.key), moved.map((m) => m.level)],
  );
  // Every level passed gets its event, in order (one batch may pass 80 % and reach 100 %).
  for (const { p, level } of moved)
    for (const l of ALERT_LEVELS)
      if (l > p.alertLevel && l <= level)
        admission.crossings.push({ portfolioKey: p.key, level: l, used: p.used, limit: p.limit!, source: p.source });
}

/**
 * One account.messaging_limit event per crossing for each customer with an account in the
 * portfolio, naming that customer's accounts only.
 */
export async function writeCrossingEvents(tx: Queryable, crossings: LimitCrossing[], now: Date): Promise<void> {
  if (crossings.length === 0) return;
  const rows = await tx.query<{ key: string; customer_id: string; portfolio_id: string | null; ids: string[] }>(
    `SELECT ${PORTFOLIO_KEY_SQL} AS key, a.customer_id, a.portfolio_id, array_agg(a.id::text ORDER BY a.id) AS ids
       FROM chat_accounts a WHERE ${PORTFOLIO_KEY_SQL} = ANY($1::text[])
      GROUP BY 1, 2, 3`,
    [crossings.map((c) => c.portfolioKey)],
  );
  const events = crossings.flatMap((c) =>
    rows
      .filter((r) => r.key === c.portfolioKey)
      .map((r) => ({
        customerId: r.customer_id,
        type: 'account.messaging_limit' as const,
        createdAt: now,
        data: {
          chatAccountIds: r.ids,
          portfolioId: r.portfolio_id,
          thresholdPercent: c.level,
          used: c.used,
          limit: c.limit,
          tier: tierOfLimit(c.limit),
          source: c.source,
          windowHours: MESSAGING_LIMIT_WINDOW_HOURS,
        },
      })),
  );
  await writeEvents(tx, events);
}

/** A portfolio's limit and use as the account reads show it. */
export type MessagingLimitView = {
  portfolioId: string | null;
  limit: number | null;
  tier: string | null;
  source: 'default' | 'provider' | 'operator';
  used: number;
  windowHours: number;
};

/** The messaging limit of each account's portfolio (one statement for any number of accounts). */
export async function messagingLimitsOf(
  q: Pick<Queryable, 'query'>,
  accountIds: string[],
): Promise<Map<string, MessagingLimitView>> {
  if (accountIds.length === 0) return new Map();
  const rows = await q.query<{
    id: string;
    portfolio_id: string | null;
    found: boolean;
    messaging_limit: number | null;
    limit_source: string | null;
    used: number;
  }>(
    `SELECT a.id, a.portfolio_id, p.portfolio_key IS NOT NULL AS found, p.messaging_limit, p.limit_source,
            (SELECT count(*)::int FROM portfolio_recipients r WHERE r.portfolio_key = ${PORTFOLIO_KEY_SQL} AND r.${LIVE}) AS used
       FROM chat_accounts a LEFT JOIN messaging_portfolios p ON p.portfolio_key = ${PORTFOLIO_KEY_SQL}
      WHERE a.id = ANY($1::uuid[])`,
    [accountIds],
  );
  return new Map(
    rows.map((r) => {
      const limit = r.found ? r.messaging_limit : DEFAULT_MESSAGING_LIMIT;
      const view: MessagingLimitView = {
        portfolioId: r.portfolio_id,
        limit,
        tier: tierOfLimit(limit),
        source: (r.found ? r.limit_source : 'default') as MessagingLimitView['source'],
        used: r.used,
        windowHours: MESSAGING_LIMIT_WINDOW_HOURS,
      };
      return [r.id, view];
    }),
  );
}

/**
 * Sets the limit of the portfolios of these accounts (null: unlimited): the provider's webhook
 * (source provider) or the operator (source operator). The latest word wins.
 */
export async function setMessagingLimit(
  q: Queryable,
  accountIds: string[],
  limit: number | null,
  source: 'provider' | 'operator',
): Promise<number> {
  if (accountIds.length === 0) return 0;
  const rows = await q.query(
    `INSERT INTO messaging_portfolios AS p (portfolio_key, messaging_limit, limit_source, limit_updated_at)
     SELECT DISTINCT ${PORTFOLIO_KEY_SQL}, $2::int, $3, now() FROM chat_accounts a WHERE a.id = ANY($1::uuid[]) ORDER BY 1
     ON CONFLICT (portfolio_key) DO UPDATE
       SET messaging_limit = EXCLUDED.messaging_limit, limit_source = EXCLUDED.limit_source,
           limit_updated_at = now(), updated_at = now()
     RETURNING 1`,
    [[...new Set(accountIds)], limit, source],
  );
  return rows.length;
}

/** The purger: conversation starts older than the messaging limit's 24 hours no longer count (decision 0044). */
export async function purgePortfolioRecipients(db: Pick<Queryable, 'query'>): Promise<void> {
  await db.query(`DELETE FROM portfolio_recipients WHERE started_at < now() - interval '25 hours'`);
}
