// The one writer of senders (the sender aggregate) and sender_identities (the number an account
// last saw with a user id, decision 0036): ARCHITECTURE.md, "Who writes what". Both are written
// by ingestion only; src/senders/ and the send path read them directly.
import type { Queryable } from '../db/db.js';
import type { InboundReferral } from '../provider/parse-inbound-content.js';
import type { KeyMove } from '../suppressions/recipient-keys.js';

type IdentityRow = { chat_account_id: string; user_id: string; phone_e164: string };

/**
 * Counts a batch into the aggregate, one row per (account, number), as 8 parallel columns (in the
 * order of the column list below); `created` says the row is new.
 */
export function upsertSenders(
  tx: Queryable,
  columns: unknown[][],
): Promise<
  {
    chat_account_id: string;
    phone_e164: string;
    first_inbound_at: Date;
    first_referral: InboundReferral | string | null;
    created: boolean;
  }[]
> {
  return tx.query(
    `INSERT INTO senders AS s (chat_account_id, customer_id, phone_e164, first_inbound_at, last_inbound_at, inbound_count, display_name, first_referral)
     SELECT a, c, p, f, l, n, NULLIF(d, ''), r::jsonb FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::int[], $7::text[], $8::text[])
       AS t(a, c, p, f, l, n, d, r) ORDER BY a, p
     ON CONFLICT (chat_account_id, phone_e164) DO UPDATE SET
       last_inbound_at = greatest(s.last_inbound_at, EXCLUDED.last_inbound_at),
       inbound_count = s.inbound_count + EXCLUDED.inbound_count,
       display_name = COALESCE(EXCLUDED.display_name, s.display_name)
     RETURNING chat_account_id, phone_e164, first_inbound_at, first_referral, (xmax = 0) AS created`,
    columns,
  );
}

/**
 * Moves the aggregate's rows from one recipient key to another, merged into the new key's row when
 * there is one (the earlier first contact keeps its ad referral). The other per-person rows move
 * with suppressions/recipient-keys.ts (moveRecipientKeys), in the same transaction.
 */
export async function moveSenderKeys(tx: Queryable, moves: KeyMove[]): Promise<void> {
  const list = moves.filter((m) => m.from !== m.to);
  if (list.length === 0) return;
  const args = [list.map((m) => m.accountId), list.map((m) => m.from), list.map((m) => m.to)];
  await tx.query(
    `WITH old AS (
       DELETE FROM senders s USING unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
        WHERE s.chat_account_id = t.a AND s.phone_e164 = t.o
       RETURNING s.*, t.n)
     INSERT INTO senders AS s (chat_account_id, customer_id, phone_e164, first_inbound_at, last_inbound_at, inbound_count, display_name, first_referral)
     SELECT chat_account_id, customer_id, n, first_inbound_at, last_inbound_at, inbound_count, display_name, first_referral FROM old ORDER BY chat_account_id, n
     ON CONFLICT (chat_account_id, phone_e164) DO UPDATE SET
       first_referral = CASE WHEN EXCLUDED.first_inbound_at < s.first_inbound_at THEN EXCLUDED.first_referral ELSE s.first_referral END,
       first_inbound_at = least(s.first_inbound_at, EXCLUDED.first_inbound_at),
       last_inbound_at = greatest(s.last_inbound_at, EXCLUDED.last_inbound_at),
       inbound_count = s.inbound_count + EXCLUDED.inbound_count,
       display_name = COALESCE(s.display_name, EXCLUDED.display_name)`,
    args,
  );
}

/** Learns (account, user id → number) pairs; only a new pair or a changed number returns. */
export function learnIdentities(tx: Queryable, pairs: [string, string, string][]): Promise<IdentityRow[]> {
  return tx.query<IdentityRow>(
    `INSERT INTO sender_identities AS s (chat_account_id, user_id, phone_e164) SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[])
       ON CONFLICT (chat_account_id, user_id) DO UPDATE SET phone_e164 = EXCLUDED.phone_e164
         WHERE s.phone_e164 IS DISTINCT FROM EXCLUDED.phone_e164
       RETURNING chat_account_id, user_id, phone_e164`,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1]), pairs.map((p) => p[2])],
  );
}

/** A user id changed ($1 accounts, $2 old ids, $3 new ids): the new id takes the old one's number. */
export function copyIdentities(tx: Queryable, args: string[][]): Promise<IdentityRow[]> {
  return tx.query<IdentityRow>(
    `INSERT INTO sender_identities (chat_account_id, user_id, phone_e164)
     SELECT s.chat_account_id, t.n, s.phone_e164 FROM sender_identities s
       JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n) ON s.chat_account_id = t.a AND s.user_id = t.o
      WHERE t.o <> t.n
     ON CONFLICT (chat_account_id, user_id) DO UPDATE SET phone_e164 = EXCLUDED.phone_e164
     RETURNING chat_account_id, user_id, phone_e164`,
    args,
  );
}

/** Forgets the old ids of changed user ids (same arguments as copyIdentities). */
export async function forgetOldIdentities(tx: Queryable, args: string[][]): Promise<void> {
  await tx.query(
    `DELETE FROM sender_identities s USING unnest($1::uuid[], $2::text[], $3::text[]) AS t(a, o, n)
      WHERE s.chat_account_id = t.a AND s.user_id = t.o AND t.o <> t.n`,
    args,
  );
}
