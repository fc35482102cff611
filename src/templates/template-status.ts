// Template status from the provider (decision 0015): its template webhooks, routed by WABA to the
// chat accounts of that WABA, keep each template's status, quality score and category with the
// provider's time of the change, and every real change writes one template.status event in the
// same transaction. Each fact is ordered on its own: an update older than the stored one changes
// nothing and writes no event; one that repeats the stored value (a redelivery) writes no event.
import type { Queryable } from '../db/db.js';
import { type OutboxEvent, writeEvents } from '../lifecycle/write-events.js';
import type { TemplateChange } from '../provider/parse-webhook.js';

/** Statuses a template cannot be sent in: a send of one fails at once (TEMPLATE_NOT_APPROVED). */
export const UNSENDABLE_TEMPLATE_STATUSES = ['PAUSED', 'DISABLED'] as const;

export type RoutedTemplateChange = { accountId: string; customerId: string; change: TemplateChange };

type StateRow = {
  name: string;
  language: string;
  status: string | null;
  status_at: Date | null;
  reason: string | null;
  quality_score: string | null;
  quality_at: Date | null;
  category: string | null;
  category_at: Date | null;
};

const COLUMNS = {
  status: ['status', 'status_at'],
  quality: ['quality_score', 'quality_at'],
  category: ['category', 'category_at'],
} as const;

/** The OFFICIAL chat accounts of a WABA reached through this webhook callback (the app's, or one integration's). */
export async function accountsOfWaba(
  db: Queryable,
  wabaId: string,
  integrationId: string | null,
): Promise<{ id: string; customerId: string }[]> {
  const rows = await db.query<{ id: string; customer_id: string }>(
    `SELECT id, customer_id FROM chat_accounts
      WHERE waba_id = $1 AND type = 'OFFICIAL'
        AND (CASE WHEN $2::text IS NULL THEN integration_id IS NULL ELSE integration_id = $2 END)
      ORDER BY id`,
    [wabaId, integrationId],
  );
  return rows.map((r) => ({ id: r.id, customerId: r.customer_id }));
}

/** The template.status event's data for a change applied over `before`. */
function eventData(accountId: string, c: TemplateChange, before: StateRow, after: StateRow) {
  return {
    chatAccountId: accountId,
    templateId: c.templateId,
    name: after.name,
    language: after.language,
    status: after.status,
    previousStatus: before.status,
    category: after.category,
    qualityScore: after.quality_score,
    reason: after.reason,
    change: c.kind,
    timestamp: c.occurredAt.toISOString(),
  };
}

/** Applies one change (the row locked); the event it causes, or null when it changes nothing. */
async function applyOne(tx: Queryable, r: RoutedTemplateChange): Promise<OutboxEvent | null> {
  const c = r.change;
  await tx.query(
    `INSERT INTO template_states (chat_account_id, provider_template_id, name, language)
     VALUES ($1, $2, $3, $4) ON CONFLICT (chat_account_id, provider_template_id) DO NOTHING`,
    [r.accountId, c.templateId, c.name ?? '', c.language ?? ''],
  );
  const [before] = await tx.query<StateRow>(
    `SELECT name, language, status, status_at, reason, quality_score, quality_at, category, category_at
       FROM template_states WHERE chat_account_id = $1 AND provider_template_id = $2 FOR UPDATE`,
    [r.accountId, c.templateId],
  );
  if (!before) return null;
  const [valueCol, atCol] = COLUMNS[c.kind];
  const storedAt = before[atCol];
  if (storedAt && new Date(storedAt).getTime() > c.occurredAt.getTime()) return null; // older than what we know
  const after: StateRow = {
    ...before,
    name: c.name ?? before.name,
    language: c.language ?? before.language,
    [valueCol]: c.value,
    [atCol]: c.occurredAt,
  };
  if (c.kind === 'status') after.reason = c.reason;
  // The status update names the category too; it fills in a category not known yet.
  if (c.kind === 'status' && c.category && !before.category) after.category = c.category;
  await tx.query(
    `UPDATE template_states SET name = $3, language = $4, status = $5, status_at = $6, reason = $7,
            quality_score = $8, quality_at = $9, category = $10, category_at = $11, updated_at = now()
      WHERE chat_account_id = $1 AND provider_template_id = $2`,
    [
      r.accountId,
      c.templateId,
      after.name,
      after.language,
      after.status,
      after.status_at,
      after.reason,
      after.quality_score,
      after.quality_at,
      after.category,
      after.category_at,
    ],
  );
  if (before[valueCol] === c.value) return null; // the same value again (a redelivery): no event
  return {
    customerId: r.customerId,
    type: 'template.status',
    data: eventData(r.accountId, c, before, after),
    createdAt: new Date(),
  };
}

/** Applies routed template changes in the provider's time order; returns how many events were written. */
export async function applyTemplateChanges(tx: Queryable, routed: RoutedTemplateChange[]): Promise<number> {
  const ordered = [...routed].sort(
    (a, b) =>
      a.change.occurredAt.getTime() - b.change.occurredAt.getTime() ||
      a.accountId.localeCompare(b.accountId) ||
      a.change.templateId.localeCompare(b.change.templateId),
  );
  const events: OutboxEvent[] = [];
  for (const r of ordered) {
    const event = await applyOne(tx, r);
    if (event) events.push(event);
  }
  await writeEvents(tx, events);
  return events.length;
}

/**
 * The statuses the provider last reported for these templates (by account, name and language;
 * the newest when several provider templates share them). Key: templateStateKey.
 */
export async function templateStatusesAmong(
  db: Queryable,
  templates: { accountId: string; name: string; language: string }[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (templates.length === 0) return out;
  const rows = await db.query<{ chat_account_id: string; name: string; language: string; status: string }>(
    `SELECT DISTINCT ON (s.chat_account_id, s.name, s.language) s.chat_account_id, s.name, s.language, s.status
       FROM template_states s
       JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, n, l)
         ON s.chat_account_id = t.a AND s.name = t.n AND s.language = t.l
      WHERE s.status IS NOT NULL
      ORDER BY s.chat_account_id, s.name, s.language, s.status_at DESC`,
    [templates.map((t) => t.accountId), templates.map((t) => t.name), templates.map((t) => t.language)],
  );
  for (const r of rows) out.set(templateStateKey(r.chat_account_id, r.name, r.language), r.status);
  return out;
}

export const templateStateKey = (accountId: string, name: string, language: string) =>
  `${accountId}\u0000${name}\u0000${language}`;

/** The category the provider's webhooks last gave this template, or null when none did. */
export async function reportedCategory(
  db: Queryable,
  accountId: string,
  name: string,
  language: string,
): Promise<string | null> {
  const rows = await db.query<{ category: string }>(
    `SELECT category FROM template_states
      WHERE chat_account_id = $1 AND name = $2 AND language = $3 AND category IS NOT NULL
      ORDER BY category_at DESC NULLS LAST LIMIT 1`,
    [accountId, name, language],
  );
  return rows[0]?.category ?? null;
}
