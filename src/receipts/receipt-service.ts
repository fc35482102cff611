// The provider webhook: signature over the raw bytes, account routing by phone-number id within
// the app or integration the request came through, and receipts group-committed: concurrent
// webhooks' receipts are applied together in one transaction, each answered after its commit.
import crypto from 'node:crypto';

import type { Logger } from 'pino';

import { setMessagingLimit } from '../accounts/portfolio-store.js';
import type { Db } from '../db/db.js';
import { retryTransient } from '../db/retry.js';
import { type InboundService, rawTypeLabel } from '../inbound/inbound-service.js';
import { applyReceipts, type ReceiptItem, type ReceiptOutcome } from '../lifecycle/apply-receipt.js';
import type { Metrics } from '../metrics/metrics.js';
import { classifyProviderError } from '../provider/error-map.js';
import { parseMessagingLimitChanges } from '../provider/parse-messaging-limit.js';
import {
  parseInboundMessages,
  parseStatusReceipts,
  parseTemplateChanges,
  parseUserPreferences,
  type StatusReceipt,
  type UserPreference,
} from '../provider/parse-webhook.js';
import type { Sealer } from '../shared/crypto.js';
import { createGroupCommit } from '../shared/group-commit.js';
import { SEND_ERROR_CODES } from '../shared/vocab.js';
import { applyUserPreferences, suppressByProviderMessageIds } from '../suppressions/suppression-store.js';
import { accountsOfWaba, applyTemplateChanges, type RoutedTemplateChange } from '../templates/template-status.js';

/** Where the webhook came in: the shared app, or one integration of its own. */
export type WebhookChannel = { kind: 'app' } | { kind: 'integration'; integrationId: string };

export type ReceiptService = ReturnType<typeof createReceiptService>;

export function verifySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice(7), 'hex');
  const expected = crypto.createHmac('sha256', secret).update(raw).digest();
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

type ReceiptDeps = {
  db: Db;
  sealer: Sealer;
  appSecret: string | null;
  log: Logger;
  inbound: InboundService;
  metrics: Pick<Metrics, 'receipts' | 'inboundUnsupported'>;
};

async function secretFor(deps: ReceiptDeps, channel: WebhookChannel): Promise<string | null> {
  const { db, sealer } = deps;
  if (channel.kind === 'app') return deps.appSecret;
  const rows = await db.query<{ id: string; app_secret_enc: string | null }>(
    `SELECT id, app_secret_enc FROM chat_accounts WHERE integration_id = $1 AND app_secret_enc IS NOT NULL ORDER BY updated_at DESC LIMIT 1`,
    [channel.integrationId],
  );
  const sealed = rows[0]?.app_secret_enc;
  if (!sealed) return deps.appSecret;
  try {
    return sealer.open(sealed, { table: 'chat_accounts', column: 'app_secret_enc', id: rows[0]!.id });
  } catch {
    return null;
  }
}

/**
 * The group commit of receipts: one transaction per batch (a deadlock with a concurrent batch is
 * retried); a batch the database refuses is retried receipt by receipt, so one bad item fails alone.
 */
function receiptGroup(deps: ReceiptDeps) {
  const { db, log } = deps;
  const apply = (items: ReceiptItem[]) => retryTransient(() => db.transaction((tx) => applyReceipts(tx, items)));
  return createGroupCommit<ReceiptItem, ReceiptOutcome | 'failed'>(
    async (items) => {
      try {
        return await apply(items);
      } catch (err) {
        if (items.length === 1) {
          log.error(
            { err, providerMessageId: items[0]!.receipt.providerMessageId },
            'applying a provider receipt failed',
          );
          return ['failed' as const];
        }
        const out: (ReceiptOutcome | 'failed')[] = [];
        for (const item of items)
          out.push(
            ...(await apply([item]).catch((e: unknown) => {
              log.error(
                { err: e, providerMessageId: item.receipt.providerMessageId },
                'applying a provider receipt failed',
              );
              return ['failed' as const];
            })),
          );
        return out;
      }
    },
    { maxBatch: 500, maxInFlight: db.kind === 'pglite' ? 1 : 2 },
  );
}

/**
 * What the provider told us of opt-outs (decision 0014): failed receipts with its opt-out error,
 * and user_preferences stop/resume. One transaction; 1 when it failed (the webhook is redelivered).
 */
async function recordOptOuts(deps: ReceiptDeps, o: Awaited<ReturnType<typeof routeOptOuts>>): Promise<number> {
  const { db, log } = deps;
  if (o.failedSends.length + o.preferences.length === 0) return 0;
  try {
    await retryTransient(() =>
      db.transaction(async (tx) => {
        await suppressByProviderMessageIds(
          tx,
          o.failedSends,
          'The provider refused a send: the user opted out of marketing messages (131050)',
        );
        await applyUserPreferences(tx, o.preferences);
      }),
    );
    return 0;
  } catch (err) {
    log.error({ err }, 'recording opt-outs from a provider webhook failed');
    return 1;
  }
}

/**
 * The template webhooks of a payload (decision 0015), routed by WABA (entry[].id) to every chat
 * account of that WABA reached through this callback; one transaction. 1 when it failed.
 */
async function recordTemplateChanges(deps: ReceiptDeps, payload: unknown, integrationId: string | null) {
  const { db, log } = deps;
  const { changes, skipped } = parseTemplateChanges(payload);
  const routed: RoutedTemplateChange[] = [];
  let unknownAccount = 0;
  for (const change of changes) {
    const accounts = await accountsOfWaba(db, change.wabaId, integrationId);
    if (accounts.length === 0) unknownAccount++;
    for (const a of accounts) routed.push({ accountId: a.id, customerId: a.customerId, change });
  }
  if (routed.length === 0) return { skipped, unknownAccount, failed: 0 };
  try {
    await retryTransient(() => db.transaction((tx) => applyTemplateChanges(tx, routed)));
    return { skipped, unknownAccount, failed: 0 };
  } catch (err) {
    log.error({ err }, 'recording template changes from a provider webhook failed');
    return { skipped, unknownAccount, failed: 1 };
  }
}

/**
 * The messaging-limit webhooks of a payload (decision 0044): the limit of the portfolio of every
 * chat account of the WABA reached through this callback. 1 when recording failed.
 */
async function recordMessagingLimits(deps: ReceiptDeps, payload: unknown, integrationId: string | null) {
  const { db, log } = deps;
  const { changes, skipped } = parseMessagingLimitChanges(payload);
  let unknownAccount = 0;
  const routed: { accountIds: string[]; limit: number | null }[] = [];
  for (const change of changes) {
    const accounts = await accountsOfWaba(db, change.wabaId, integrationId);
    if (accounts.length === 0) unknownAccount++;
    else routed.push({ accountIds: accounts.map((a) => a.id), limit: change.limit });
  }
  if (routed.length === 0) return { skipped, unknownAccount, failed: 0 };
  try {
    await retryTransient(() =>
      db.transaction(async (tx) => {
        for (const r of routed) await setMessagingLimit(tx, r.accountIds, r.limit, 'provider');
      }),
    );
    log.info({ changes: routed }, 'the provider reported a business portfolio messaging limit');
    return { skipped, unknownAccount, failed: 0 };
  } catch (err) {
    log.error({ err }, 'recording a messaging limit from a provider webhook failed');
    return { skipped, unknownAccount, failed: 1 };
  }
}

export function createReceiptService(deps: ReceiptDeps) {
  const { log } = deps;
  const group = receiptGroup(deps);

  return {
    /** False when the signature does not verify: nothing is touched then. */
    async authenticate(channel: WebhookChannel, raw: Buffer, signature: string | undefined): Promise<boolean> {
      const secret = await secretFor(deps, channel);
      return secret !== null && verifySignature(raw, signature, secret);
    },

    /**
     * Applies every receipt of a verified payload (in the current batch of all webhooks'
     * receipts) and resolves after their commit; one bad item never stops the others.
     */
    async ingest(channel: WebhookChannel, payload: unknown) {
      const integrationId = channel.kind === 'integration' ? channel.integrationId : null;
      // Routing: a phone-number id, among the accounts reached through this same callback.
      const accountFor = (phoneNumberId: string) => deps.inbound.account({ phoneNumberId, integrationId });
      const { receipts, skipped } = parseStatusReceipts(payload);
      const counts = { applied: 0, ignored: 0, parked: 0, unknownAccount: 0, skipped, failed: 0 };
      const items: ReceiptItem[] = [];
      for (const r of receipts) {
        const account = await accountFor(r.phoneNumberId);
        if (account) items.push({ accountId: account.id, receipt: r });
        else counts.unknownAccount++;
      }
      for (const outcome of await Promise.all(items.map((item) => group.submit(item)))) counts[outcome]++;
      // Inbound messages carried by the same webhook.
      const inbound = parseInboundMessages(payload);
      const messages = [];
      for (const message of inbound.messages) {
        const account = await accountFor(message.phoneNumberId);
        if (account) messages.push({ account, message });
        else counts.unknownAccount++;
      }
      counts.skipped += inbound.skipped;
      // Items naming no business number: no account to keep them under; counted, and logged below.
      for (const item of inbound.unrouted)
        deps.metrics.inboundUnsupported.inc({ reason: 'no_phone_number_id', type: rawTypeLabel(item.rawType) });
      counts.failed += (await deps.inbound.ingest(messages)).failed;
      const preferences = parseUserPreferences(payload);
      counts.skipped += preferences.skipped;
      const optOuts = await routeOptOuts(items, preferences.preferences, accountFor);
      counts.unknownAccount += optOuts.unknownAccount;
      counts.failed += await recordOptOuts(deps, optOuts);
      const templates = await recordTemplateChanges(deps, payload, integrationId);
      counts.skipped += templates.skipped;
      counts.unknownAccount += templates.unknownAccount;
      counts.failed += templates.failed;
      const limits = await recordMessagingLimits(deps, payload, integrationId);
      counts.skipped += limits.skipped;
      counts.unknownAccount += limits.unknownAccount;
      counts.failed += limits.failed;
      for (const [result, n] of Object.entries(counts)) if (n > 0) deps.metrics.receipts.inc({ result }, n);
      if (counts.unknownAccount + counts.skipped > 0) log.warn({ counts }, 'provider webhook items not applied');
      return counts;
    },
  };
}

/** The opt-out facts of a webhook, with the accounts they concern. */
async function routeOptOuts(
  receipts: ReceiptItem[],
  preferences: UserPreference[],
  accountFor: (phoneNumberId: string) => Promise<{ id: string; customerId: string } | null>,
) {
  const optedOut = (r: StatusReceipt) =>
    r.status === 'failed' &&
    classifyProviderError(r.error?.code ?? null, null, null).errorCode === SEND_ERROR_CODES.RECIPIENT_OPTED_OUT;
  const failedSends = receipts
    .filter((i) => optedOut(i.receipt))
    .map((i) => ({ accountId: i.accountId, providerMessageId: i.receipt.providerMessageId }));
  const routed = [];
  let unknownAccount = 0;
  for (const p of preferences) {
    const account = await accountFor(p.phoneNumberId);
    if (!account) unknownAccount++;
    else
      routed.push({
        accountId: account.id,
        customerId: account.customerId,
        phone: p.phone,
        value: p.value,
        detail: p.detail,
        at: p.occurredAt,
      });
  }
  return { failedSends, preferences: routed, unknownAccount };
}
