// Which provider endpoint carries a send (decision 0038): a MARKETING template of an account with
// the Marketing Messages API on goes to POST /<phone-number-id>/marketing_messages, everything else
// to /messages. The template's category is its current one (template webhooks first, then the
// catalog: templates/template-categories.ts). While the provider says the account is not onboarded
// there (131055), its sends go to /messages; the API is tried again after a while.
import { holdMarketingUntil } from '../accounts/account-store.js';
import type { SendAccount } from '../accounts/send-accounts.js';
import type { Db } from '../db/db.js';
import type { Claimed } from '../lifecycle/claim.js';
import type { ProviderRoute, SendOutcome } from '../provider/cloud-api.js';
import type { TemplateCategories } from '../templates/template-categories.js';

/** The provider's answer when the business has not accepted the Marketing Messages API terms. */
export const NOT_ONBOARDED_CODE = 131055;
/** How long an account refused that way sends its marketing templates over /messages before trying again. */
export const REFUSAL_HOLD_MS = 60 * 60_000;

/** The messages (by id) that go over the Marketing Messages API; the rest go over /messages. */
export async function marketingRoutes(
  categories: Pick<TemplateCategories, 'categoryOf'>,
  accounts: Map<string, SendAccount>,
  messages: Claimed[],
  now: Date,
): Promise<Map<string, ProviderRoute>> {
  const routes = new Map<string, ProviderRoute>();
  for (const m of messages) {
    const a = accounts.get(m.chatAccountId);
    const t = m.content.template;
    if (!a?.marketingMessagesApi || t === undefined) continue;
    if (a.marketingMessagesRefusedUntil && a.marketingMessagesRefusedUntil > now) continue;
    const category = await categories.categoryOf(m.customerId, a.id, t.name, t.language).catch(() => null);
    if (category === 'MARKETING') routes.set(m.id, 'marketing_messages');
  }
  return routes;
}

/** The Marketing Messages API refused the account as not onboarded: the send was not made. */
export const notOnboarded = (outcome: SendOutcome) =>
  !outcome.ok && outcome.transport === null && outcome.detail?.code === NOT_ONBOARDED_CODE;

/** Records the refusal on the account, so every worker sends its marketing templates over /messages for a while. */
export async function holdMarketingRoute(db: Pick<Db, 'query'>, account: SendAccount): Promise<void> {
  const until = new Date(Date.now() + REFUSAL_HOLD_MS);
  account.marketingMessagesRefusedUntil = until;
  await holdMarketingUntil(db, account.id, until);
}
