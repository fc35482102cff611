// The SQL of suppression lists: every way onto and off a list, and the reads the dispatcher, the
// sender aggregate and the list endpoint make. Sets, never a statement per number.
import crypto from 'node:crypto';

import type { Queryable } from '../db/db.js';
import type { SuppressionSource } from '../shared/vocab.js';
import { DEFAULT_OPT_OUT_KEYWORDS, matchOptOutKeyword } from './opt-out-keywords.js';

export type NewSuppression = {
  accountId: string;
  customerId: string;
  phone: string;
  source: SuppressionSource;
  reason: string;
  at?: Date;
};

const key = (accountId: string, phone: string) => `${accountId}\u0000${phone}`;

/**
 * Puts numbers on their accounts' lists; a number already there keeps its first entry (source,
 * reason, since). Rows in (account, phone) order: concurrent writers never deadlock.
 */
export async function addSuppressions(tx: Queryable, items: NewSuppression[]): Promise<number> {
  if (items.length === 0) return 0;
  const rows = [...new Map(items.map((i) => [key(i.accountId, i.phone), i])).values()];
  const inserted = await tx.query(
    `INSERT INTO suppressions (id, chat_account_id, customer_id, phone_e164, source, reason, created_at)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
       AS t(id, a, c, p, s, r, at) ORDER BY a, p
     ON CONFLICT (chat_account_id, phone_e164) DO NOTHING RETURNING id`,
    [
      rows.map(() => crypto.randomUUID()),
      rows.map((r) => r.accountId),
      rows.map((r) => r.customerId),
      rows.map((r) => r.phone),
      rows.map((r) => r.source),
      rows.map((r) => r.reason.slice(0, 500)),
      rows.map((r) => (r.at ?? new Date()).toISOString()),
    ],
  );
  return inserted.length;
}

/** Takes numbers off their accounts' lists, except entries whose source is in `keep`. */
export async function removeSuppressions(
  tx: Queryable,
  items: { accountId: string; phone: string }[],
  keep: SuppressionSource[] = [],
): Promise<number> {
  if (items.length === 0) return 0;
  const removed = await tx.query(
    `DELETE FROM suppressions s USING unnest($1::uuid[], $2::text[]) AS t(a, p)
      WHERE s.chat_account_id = t.a AND s.phone_e164 = t.p AND s.source <> ALL($3::text[]) RETURNING s.id`,
    [items.map((i) => i.accountId), items.map((i) => i.phone), keep],
  );
  return removed.length;
}

/** Since when each of these (account, number) pairs is suppressed; pairs not listed are absent. */
export async function suppressedAmong(
  q: Queryable,
  pairs: { accountId: string; phone: string }[],
): Promise<Map<string, Date>> {
  if (pairs.length === 0) return new Map();
  const rows = await q.query<{ chat_account_id: string; phone_e164: string; created_at: Date }>(
    `SELECT s.chat_account_id, s.phone_e164, s.created_at FROM suppressions s
       JOIN unnest($1::uuid[], $2::text[]) AS t(a, p) ON s.chat_account_id = t.a AND s.phone_e164 = t.p`,
    [pairs.map((p) => p.accountId), pairs.map((p) => p.phone)],
  );
  return new Map(rows.map((r) => [key(r.chat_account_id, r.phone_e164), r.created_at]));
}
export const suppressionKey = key;

/** Each account's opt-out keywords (the default list when its customer set none). */
export async function keywordsOf(q: Queryable, accountIds: string[]): Promise<Map<string, readonly string[]>> {
  const ids = [...new Set(accountIds)];
  const rows =
    ids.length === 0
      ? []
      : await q.query<{ chat_account_id: string; keywords: string[] }>(
          'SELECT chat_account_id, keywords FROM opt_out_keywords WHERE chat_account_id = ANY($1::uuid[])',
          [ids],
        );
  const own = new Map(rows.map((r) => [r.chat_account_id, r.keywords as readonly string[]]));
  return new Map(ids.map((id) => [id, own.get(id) ?? DEFAULT_OPT_OUT_KEYWORDS]));
}

/** Inbound texts that are an opt-out keyword of their account put their sender on its list. */
export async function suppressKeywordSenders(
  tx: Queryable,
  inbound: { accountId: string; customerId: string; phone: string | null; text: string | null; at: Date }[],
): Promise<number> {
  const candidates = inbound.filter((i) => i.phone !== null && i.text !== null && i.text.length <= 200);
  if (candidates.length === 0) return 0;
  const keywords = await keywordsOf(
    tx,
    candidates.map((c) => c.accountId),
  );
  const hits = candidates.flatMap((c) => {
    const word = matchOptOutKeyword(c.text, keywords.get(c.accountId) ?? DEFAULT_OPT_OUT_KEYWORDS);
    return word === null
      ? []
      : [
          {
            accountId: c.accountId,
            customerId: c.customerId,
            phone: c.phone!,
            source: 'keyword' as const,
            reason: `The number wrote the opt-out keyword ${word}`,
            at: c.at,
          },
        ];
  });
  return addSuppressions(tx, hits);
}

/**
 * Numbers whose messages just failed at the provider with the opt-out error (found by the
 * provider's message ids) go on their account's list.
 */
export async function suppressByProviderMessageIds(
  tx: Queryable,
  items: { accountId: string; providerMessageId: string }[],
  reason: string,
): Promise<number> {
  if (items.length === 0) return 0;
  const rows = await tx.query<{ chat_account_id: string; customer_id: string; recipient: string }>(
    `SELECT m.chat_account_id, m.customer_id, m.recipient FROM messages m
       JOIN unnest($1::uuid[], $2::text[]) AS t(a, w) ON m.chat_account_id = t.a AND m.provider_message_id = t.w`,
    [items.map((i) => i.accountId), items.map((i) => i.providerMessageId)],
  );
  return addSuppressions(
    tx,
    rows.map((r) => ({
      accountId: r.chat_account_id,
      customerId: r.customer_id,
      phone: r.recipient,
      source: 'provider_error' as const,
      reason,
    })),
  );
}

/**
 * The provider's user_preferences: the latest choice per (account, number) of the batch wins;
 * `stop` puts the number on the list, `resume` takes it off unless the customer put it there.
 */
export async function applyUserPreferences(
  tx: Queryable,
  items: {
    accountId: string;
    customerId: string;
    phone: string;
    value: 'stop' | 'resume';
    detail: string | null;
    at: Date;
  }[],
): Promise<void> {
  const latest = new Map<string, (typeof items)[number]>();
  for (const i of items) {
    const k = key(i.accountId, i.phone);
    const seen = latest.get(k);
    if (!seen || seen.at <= i.at) latest.set(k, i);
  }
  const chosen = [...latest.values()];
  await addSuppressions(
    tx,
    chosen
      .filter((i) => i.value === 'stop')
      .map((i) => ({
        ...i,
        source: 'user_preferences' as const,
        reason: i.detail ?? 'The user asked the provider to stop marketing messages',
      })),
  );
  await removeSuppressions(
    tx,
    chosen.filter((i) => i.value === 'resume'),
    ['customer'],
  );
}

/** Moves entries to a new recipient key ($1 accounts, $2 old keys, $3 new keys); an entry of the new key wins. */
export async function moveSuppressionKeys(tx: Queryable, args: string[][]): Promise<void> {
  await tx.query(
    `UPDATE suppressions s SET phone_e164 = t.n FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
      WHERE s.chat_account_id = t.a AND s.phone_e164 = t.o
        AND NOT EXISTS (SELECT 1 FROM suppressions x WHERE x.chat_account_id = t.a AND x.phone_e164 = t.n)`,
    args,
  );
}
