// The provider webhook: signature over the raw bytes, account routing by phone-number id within
// the app or integration the request came through, and each receipt applied on its own.
import crypto from 'node:crypto';

import type { Logger } from 'pino';

import type { Db } from '../db/db.js';
import type { InboundService } from '../inbound/inbound-service.js';
import { applyReceipt } from '../lifecycle/apply-receipt.js';
import type { Metrics } from '../metrics/metrics.js';
import { parseInboundMessages, parseStatusReceipts } from '../provider/parse-webhook.js';
import type { Sealer } from '../shared/crypto.js';

/** Where the webhook came in: the shared app, or one integration of its own. */
export type WebhookChannel = { kind: 'app' } | { kind: 'integration'; integrationId: string };

export type ReceiptService = ReturnType<typeof createReceiptService>;

export function verifySignature(raw: Buffer, header: string | undefined, secret: string): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice(7), 'hex');
  const expected = crypto.createHmac('sha256', secret).update(raw).digest();
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

export function createReceiptService(deps: {
  db: Db;
  sealer: Sealer;
  appSecret: string | null;
  log: Logger;
  inbound: InboundService;
  metrics: Pick<Metrics, 'receipts'>;
}) {
  const { db, sealer, log } = deps;

  async function secretFor(channel: WebhookChannel): Promise<string | null> {
    if (channel.kind === 'app') return deps.appSecret;
    const rows = await db.query<{ app_secret_enc: string | null }>(
      `SELECT app_secret_enc FROM chat_accounts WHERE integration_id = $1 AND app_secret_enc IS NOT NULL ORDER BY updated_at DESC LIMIT 1`,
      [channel.integrationId],
    );
    const sealed = rows[0]?.app_secret_enc;
    if (!sealed) return deps.appSecret;
    try {
      return sealer.open(sealed);
    } catch {
      return null;
    }
  }

  return {
    /** False when the signature does not verify: nothing is touched then. */
    async authenticate(channel: WebhookChannel, raw: Buffer, signature: string | undefined): Promise<boolean> {
      const secret = await secretFor(channel);
      return secret !== null && verifySignature(raw, signature, secret);
    },

    /** Applies every receipt of a verified payload; one bad item never stops the others. */
    async ingest(channel: WebhookChannel, payload: unknown) {
      const integrationId = channel.kind === 'integration' ? channel.integrationId : null;
      // Routing: a phone-number id, among the accounts reached through this same callback.
      const accountFor = (phoneNumberId: string) => deps.inbound.account({ phoneNumberId, integrationId });
      const { receipts, skipped } = parseStatusReceipts(payload);
      const counts = { applied: 0, ignored: 0, parked: 0, unknownAccount: 0, skipped, failed: 0 };
      for (const r of receipts) {
        const account = await accountFor(r.phoneNumberId);
        if (!account) {
          counts.unknownAccount++;
          continue;
        }
        try {
          counts[await db.transaction((tx) => applyReceipt(tx, account.id, r))]++;
        } catch (err) {
          counts.failed++;
          log.error({ err, providerMessageId: r.providerMessageId }, 'applying a provider receipt failed');
        }
      }
      // Inbound messages carried by the same webhook.
      const inbound = parseInboundMessages(payload);
      const items = [];
      for (const message of inbound.messages) {
        const account = await accountFor(message.phoneNumberId);
        if (account) items.push({ account, message });
        else counts.unknownAccount++;
      }
      counts.skipped += inbound.skipped;
      counts.failed += (await deps.inbound.ingest(items)).failed;
      for (const [result, n] of Object.entries(counts)) if (n > 0) deps.metrics.receipts.inc({ result }, n);
      if (counts.unknownAccount + counts.skipped > 0) log.warn({ counts }, 'provider webhook items not applied');
      return counts;
    },
  };
}
