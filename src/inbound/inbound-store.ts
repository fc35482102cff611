// The one writer of inbound_messages and inbound_receptions (ARCHITECTURE.md, "Who writes what"):
// ingestion's rows, the read mark, and the purger's deletions. Others read the tables directly.
import { deleteInChunks } from '../db/chunked.js';
import type { Queryable } from '../db/db.js';

/** Ingestion: the receptions not seen before (the first sight wins), as (account, provider id) rows. */
export function claimReceptionRows(
  tx: Queryable,
  accountIds: string[],
  providerMessageIds: string[],
): Promise<{ chat_account_id: string; provider_message_id: string }[]> {
  return tx.query<{ chat_account_id: string; provider_message_id: string }>(
    `INSERT INTO inbound_receptions (chat_account_id, provider_message_id)
     SELECT DISTINCT a, m FROM unnest($1::uuid[], $2::text[]) AS t(a, m)
     ON CONFLICT DO NOTHING RETURNING chat_account_id, provider_message_id`,
    [accountIds, providerMessageIds],
  );
}

/** Ingestion: the inbox rows, as 15 parallel columns (in the order of the column list below). */
export async function insertInboundMessages(tx: Queryable, columns: unknown[][]): Promise<void> {
  await tx.query(
    `INSERT INTO inbound_messages (id, customer_id, chat_account_id, channel, provider_message_id, from_e164, from_display_name, message_type,
                                   text, display_text, reply_to_provider_message_id, received_at, expires_at, from_user_id, content)
     SELECT id, c, a, ch, pm, f, dn, mt, tx, dt, rp, r, r + make_interval(days => d), u, ct::jsonb
       FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::timestamptz[], $13::int[], $14::text[], $15::text[])
         AS t(id, c, a, ch, pm, f, dn, mt, tx, dt, rp, r, d, u, ct)`,
    columns,
  );
}

/** Records the read mark unless one is recorded; its time, or undefined when one already was. */
export async function claimReadMark(
  db: Pick<Queryable, 'query'>,
  inboundMessageId: string,
  typing: boolean,
): Promise<{ read_at: Date } | undefined> {
  const [claimed] = await db.query<{ read_at: Date }>(
    `UPDATE inbound_messages SET read_at = now(), read_typing = $2 WHERE id = $1 AND read_at IS NULL RETURNING read_at`,
    [inboundMessageId, typing],
  );
  return claimed;
}

/** Takes a read mark back (the provider refused it). */
export async function clearReadMark(db: Pick<Queryable, 'query'>, inboundMessageId: string): Promise<void> {
  await db.query('UPDATE inbound_messages SET read_at = NULL, read_typing = NULL WHERE id = $1', [inboundMessageId]);
}

/** The purger: inbox content past its plan retention, in chunks; how many went. */
export function purgeInboundMessages(db: Pick<Queryable, 'query'>, chunk: number): Promise<number> {
  return deleteInChunks(
    db,
    `DELETE FROM inbound_messages WHERE id IN (SELECT id FROM inbound_messages WHERE expires_at <= now() LIMIT $1) RETURNING id`,
    chunk,
  );
}

/** The purger: receptions (the dedupe of provider retries, which stop after 7 days) after 8 days. */
export function purgeInboundReceptions(db: Pick<Queryable, 'query'>, chunk: number): Promise<number> {
  return deleteInChunks(
    db,
    `DELETE FROM inbound_receptions WHERE (chat_account_id, provider_message_id) IN (
       SELECT chat_account_id, provider_message_id FROM inbound_receptions WHERE received_at < now() - interval '8 days' LIMIT $1) RETURNING 1`,
    chunk,
  );
}
