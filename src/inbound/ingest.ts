// Ingesting one inbound message: dedupe provider retries, resolve the sender's number, update the
// sender aggregate (before any inbox filter), store it in the inbox (Pro, filters permitting),
// and write message.inbound and, the first time, sender.first_inbound, all in one transaction.
import crypto from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { writeEvents } from '../events/outbox.js';
import { PLAN_LIMITS, type Plan } from '../plans/plans.js';
import type { InboundMessage } from '../receipts/parse-webhook.js';

export type InboundAccount = { id: string; customerId: string; plan: Plan; channel: string };

export type Ingested =
  | { kind: 'duplicate' }
  | { kind: 'ingested'; inboundMessageId: string; stored: boolean; from: string | null; firstInbound: boolean; eventData: Record<string, unknown> };

type Filter = { mode: 'off' | 'whitelist' | 'blacklist'; numbers: string[] };

function passes(filter: Filter | undefined, from: string | null): boolean {
  if (!filter || filter.mode === 'off' || from === null) return true;
  const listed = filter.numbers.includes(from);
  return filter.mode === 'whitelist' ? listed : !listed;
}

export async function ingestInbound(tx: Queryable, account: InboundAccount, m: InboundMessage): Promise<Ingested> {
  const fresh = await tx.query(
    `INSERT INTO inbound_receptions (chat_account_id, provider_message_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`,
    [account.id, m.providerMessageId],
  );
  if (fresh.length === 0) return { kind: 'duplicate' };

  // A privacy identifier resolves through an earlier message that carried it with the number.
  let from = m.fromPhone;
  if (m.userId !== null) {
    if (from !== null) {
      await tx.query(
        `INSERT INTO sender_identities (chat_account_id, user_id, phone_e164) VALUES ($1, $2, $3)
         ON CONFLICT (chat_account_id, user_id) DO UPDATE SET phone_e164 = EXCLUDED.phone_e164`,
        [account.id, m.userId, from],
      );
    } else {
      const [known] = await tx.query<{ phone_e164: string }>('SELECT phone_e164 FROM sender_identities WHERE chat_account_id = $1 AND user_id = $2', [account.id, m.userId]);
      from = known?.phone_e164 ?? null;
    }
  }

  let firstInbound = false;
  let firstInboundAt: Date | null = null;
  if (from !== null) {
    // The primary key makes exactly one insert win under concurrency; firstInboundAt never changes.
    const [sender] = await tx.query<{ first_inbound_at: Date; created: boolean }>(
      `INSERT INTO senders AS s (chat_account_id, customer_id, phone_e164, first_inbound_at, last_inbound_at, inbound_count, display_name)
       VALUES ($1, $2, $3, $4, $4, 1, NULLIF($5, ''))
       ON CONFLICT (chat_account_id, phone_e164) DO UPDATE SET
         last_inbound_at = greatest(s.last_inbound_at, EXCLUDED.last_inbound_at),
         inbound_count = s.inbound_count + 1,
         display_name = COALESCE(EXCLUDED.display_name, s.display_name)
       RETURNING first_inbound_at, (xmax = 0) AS created`,
      [account.id, account.customerId, from, m.receivedAt.toISOString(), m.fromDisplayName],
    );
    firstInbound = sender!.created;
    firstInboundAt = sender!.first_inbound_at;
  }

  const [filter] = PLAN_LIMITS[account.plan].inbox
    ? await tx.query<Filter>('SELECT mode, numbers FROM inbox_filters WHERE chat_account_id = $1', [account.id])
    : [];
  const stored = PLAN_LIMITS[account.plan].inbox && passes(filter, from);
  const inboundMessageId = crypto.randomUUID();
  if (stored) {
    await tx.query(
      `INSERT INTO inbound_messages (id, customer_id, chat_account_id, channel, provider_message_id, from_e164, from_display_name, message_type,
                                     text, display_text, reply_to_provider_message_id, received_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12::timestamptz + make_interval(days => $13))`,
      [inboundMessageId, account.customerId, account.id, account.channel, m.providerMessageId, from, m.fromDisplayName, m.messageType,
        m.text, m.displayText, m.contextId, m.receivedAt.toISOString(), PLAN_LIMITS[account.plan].retentionDays],
    );
  }

  let replyTo: Record<string, unknown> | undefined;
  if (m.contextId !== null) {
    const [ours] = await tx.query<{ id: string; external_id: string }>(
      'SELECT id, external_id FROM messages WHERE chat_account_id = $1 AND provider_message_id = $2 LIMIT 1',
      [account.id, m.contextId],
    );
    replyTo = { providerMessageId: m.contextId, messageId: ours?.id ?? null, externalId: ours?.external_id ?? null };
  }
  const receivedAt = m.receivedAt.toISOString();
  const eventData = {
    inboundMessageId, chatAccountId: account.id, channel: account.channel, from, fromDisplayName: m.fromDisplayName,
    messageType: m.messageType, text: m.text, receivedAt, ...(replyTo ? { replyTo } : {}),
  };
  await writeEvents(tx, [
    { customerId: account.customerId, type: 'message.inbound', createdAt: new Date(), data: eventData },
    ...(firstInbound
      ? [{
          customerId: account.customerId, type: 'sender.first_inbound' as const, createdAt: new Date(),
          data: { chatAccountId: account.id, channel: account.channel, from, fromDisplayName: m.fromDisplayName, firstInboundAt: firstInboundAt!.toISOString(), inboundMessageId: stored ? inboundMessageId : null },
        }]
      : []),
  ]);
  return { kind: 'ingested', inboundMessageId, stored, from, firstInbound, eventData };
}
