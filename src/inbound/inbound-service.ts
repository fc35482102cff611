// Inbound messages from any channel: ingestion (one transaction each), then forwarding by rules
// (Pro) through the guarded outbound client: one attempt, 10 s, no signature.
import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OutboundClient } from '../outbound/outbound-client.js';
import { type Plan, PLAN_LIMITS } from '../plans/plans.js';
import { createGroupCommit } from '../shared/group-commit.js';
import type { Condition } from './forwarding-match.js';
import { type InboundAccount, type InboundItem, ingestBatch, type Ingested } from './ingest.js';
import { ruleMatcher } from './rule-matcher.js';

export const FORWARD_TIMEOUT_MS = 10_000;

/** The kinds the metric names (a bounded label); any other messageType counts as "other". */
const KINDS = new Set([
  'text',
  'image',
  'video',
  'audio',
  'voice_note',
  'document',
  'sticker',
  'reaction',
  'location',
  'contact',
  'button',
  'interactive',
  'system',
  'unsupported',
  'order',
]);
const kindLabel = (messageType: string) => (KINDS.has(messageType) ? messageType : 'other');

/** The provider's message types (a bounded label of chatgate_inbound_unsupported_total); others count as "other". */
const RAW_TYPES = new Set([
  ...KINDS,
  'contacts',
  'unknown',
  'request_welcome',
  'ephemeral',
  'edit',
  'revoke',
  'call_permission_reply',
  'gif',
]);
export const rawTypeLabel = (type: string | null | undefined) =>
  type && RAW_TYPES.has(type) ? type : type ? 'other' : 'none';

type InboundDeps = {
  db: Db;
  log: Logger;
  client: OutboundClient;
  metrics: Pick<Metrics, 'inboundMessages' | 'inboundForwarding' | 'inboundByKind' | 'inboundUnsupported'>;
};

/**
 * Inbound messages are live: a sandbox rule (decision 0024-sandbox-keys) never gets one. Answers
 * whether any rule matched (its request made, whatever the answer: a failed one is logged).
 */
async function forward(deps: InboundDeps, account: InboundAccount, text: string | null, data: Record<string, unknown>) {
  const { db, log, client } = deps;
  const rules = await db.query<{
    id: string;
    condition_type: Condition['type'];
    pattern: string;
    case_sensitive: boolean;
    url: string;
  }>(
    `SELECT id, condition_type, pattern, case_sensitive, url FROM forwarding_rules
      WHERE customer_id = $1 AND is_active AND NOT sandbox AND (chat_account_id IS NULL OR chat_account_id = $2)
      ORDER BY created_at, id`, // in the order made: a job stopped past its budget keeps the earlier ones' results
    [account.customerId, account.id],
  );
  if (rules.length === 0) return false;
  // Regular expressions run in the matcher's worker, within a time budget per message.
  const { matched, exceeded } = await ruleMatcher().match(
    account.customerId,
    rules.map((r) => ({ type: r.condition_type, pattern: r.pattern, caseSensitive: r.case_sensitive })),
    text,
  );
  if (exceeded)
    log.warn(
      { customerId: account.customerId, chatAccountId: account.id },
      'forwarding rules: regular expressions ran out of their time budget; they did not match this message',
    );
  const body = JSON.stringify(data);
  const targets = rules.filter((_, i) => matched[i]);
  await Promise.all(
    targets.map(async (r) => {
      const res = await client.post(
        r.url,
        body,
        { 'content-type': 'application/json', 'user-agent': 'ChatGate-Forwarding/1.0', 'x-svc-forward-rule': r.id },
        FORWARD_TIMEOUT_MS,
      );
      if (res.error !== null || res.statusCode! >= 300)
        log.warn(
          { ruleId: r.id, status: res.statusCode, error: res.error },
          'forwarding an inbound message failed (single attempt)',
        );
    }),
  );
  return targets.length > 0;
}

// One group commit's batch in one transaction; a batch the database refuses is retried message
// by message, so one bad item fails alone.
async function ingestEach(db: Db, log: Logger, items: InboundItem[]): Promise<(Ingested | { kind: 'failed' })[]> {
  try {
    return await db.transaction((tx) => ingestBatch(tx, items));
  } catch (err) {
    if (items.length === 1) {
      log.error({ err, providerMessageId: items[0]!.message.providerMessageId }, 'ingesting an inbound message failed');
      return [{ kind: 'failed' as const }];
    }
    const out: (Ingested | { kind: 'failed' })[] = [];
    for (const item of items)
      out.push(
        ...(await db
          .transaction((tx) => ingestBatch(tx, [item]))
          .catch((e: unknown) => {
            log.error(
              { err: e, providerMessageId: item.message.providerMessageId },
              'ingesting an inbound message failed',
            );
            return [{ kind: 'failed' as const }];
          })),
      );
    return out;
  }
}

async function loadAccount(
  db: Db,
  where: { id: string } | { phoneNumberId: string; integrationId: string | null },
): Promise<InboundAccount | null> {
  const rows = await db.query<{ id: string; customer_id: string; plan: Plan; type: string }>(
    'id' in where
      ? `SELECT a.id, a.customer_id, c.plan, a.type FROM chat_accounts a JOIN customers c ON c.id = a.customer_id WHERE a.id = $1`
      : `SELECT a.id, a.customer_id, c.plan, a.type FROM chat_accounts a JOIN customers c ON c.id = a.customer_id
          WHERE a.phone_number_id = $1 AND a.type = 'OFFICIAL' AND (CASE WHEN $2::text IS NULL THEN a.integration_id IS NULL ELSE a.integration_id = $2 END)`,
    'id' in where ? [where.id] : [where.phoneNumberId, where.integrationId],
  );
  const r = rows[0];
  return r
    ? {
        id: r.id,
        customerId: r.customer_id,
        plan: r.plan,
        channel: r.type === 'OFFICIAL' ? 'chat_official' : 'chat_direct',
      }
    : null;
}

export type InboundService = ReturnType<typeof createInboundService>;

export function createInboundService(deps: InboundDeps) {
  const { db, log } = deps;
  // Accounts by webhook route: a plan or routing change applies within these few seconds.
  const ACCOUNT_CACHE_MS = 5000;
  const accountCache = new Map<string, { account: InboundAccount; at: number }>();
  // One look-up per route at a time: when an entry expires under load, the receipts arriving for
  // that account meanwhile wait for the same query instead of each sending its own.
  const loading = new Map<string, Promise<InboundAccount | null>>();

  // Concurrent webhooks' messages share one transaction (group commit); a batch the database
  // refuses is retried message by message (ingestEach).
  const group = createGroupCommit<InboundItem, Ingested | { kind: 'failed' }>((items) => ingestEach(db, log, items), {
    maxBatch: 500,
    maxInFlight: db.kind === 'pglite' ? 1 : 2,
  });

  return {
    /** Ingests messages for accounts already resolved. A failed one is redelivered by the provider (idempotently). */
    async ingest(items: InboundItem[]): Promise<{ ingested: number; duplicates: number; failed: number }> {
      const results = await Promise.all(items.map((item) => group.submit(item)));
      let ingested = 0;
      let duplicates = 0;
      let failed = 0;
      results.forEach((result, i) => {
        if (result.kind === 'failed') failed++;
        else if (result.kind === 'duplicate') duplicates++;
        else {
          ingested++;
          const { account, message } = items[i]!;
          deps.metrics.inboundByKind.inc({ kind: kindLabel(message.messageType) });
          // Kept as unsupported: the provider could not carry it, or we could not read it (why).
          if (message.messageType === 'unsupported')
            deps.metrics.inboundUnsupported.inc({
              reason: message.unapplied ?? 'provider',
              type: rawTypeLabel(message.content?.unsupported?.type),
            });
          // Forwarding never holds up the provider's webhook answer.
          if (PLAN_LIMITS[account.plan].inbox)
            // Counted once finished: operators see forwarding at work, tests know nothing more will come.
            void forward(deps, account, message.text, result.eventData).then(
              (any) => deps.metrics.inboundForwarding.inc({ result: any ? 'forwarded' : 'unmatched' }),
              (err: unknown) => {
                deps.metrics.inboundForwarding.inc({ result: 'failed' });
                log.error({ err }, 'forwarding failed');
              },
            );
        }
      });
      const m = deps.metrics.inboundMessages;
      if (ingested > 0) m.inc({ result: 'ingested' }, ingested);
      if (duplicates > 0) m.inc({ result: 'duplicate' }, duplicates);
      if (failed > 0) m.inc({ result: 'failed' }, failed);
      return { ingested, duplicates, failed };
    },

    /** The account as ingestion needs it, or null when unknown (cached a few seconds per webhook route). */
    async account(
      where: { id: string } | { phoneNumberId: string; integrationId: string | null },
    ): Promise<InboundAccount | null> {
      const cacheKey = 'id' in where ? `id:${where.id}` : `pn:${where.phoneNumberId}:${where.integrationId ?? ''}`;
      const hit = accountCache.get(cacheKey);
      if (hit && Date.now() - hit.at < ACCOUNT_CACHE_MS) return hit.account;
      const pending = loading.get(cacheKey);
      if (pending) return pending;
      const load = loadAccount(db, where)
        .then((account) => {
          if (accountCache.size > 10_000) accountCache.clear();
          if (account) accountCache.set(cacheKey, { account, at: Date.now() });
          return account;
        })
        .finally(() => loading.delete(cacheKey));
      loading.set(cacheKey, load);
      return load;
    },
  };
}
