// Per-recipient pacing rows (recipient_pacing), learned from the provider's pair rate limit
// (131056; decision 0037; dispatch/recipient-pacing.ts is the dispatcher's use of them): a refused
// pair gets a spacing, doubled by a further refusal while paced, up to a cap; a pair with no
// refusal for a long while is forgotten. The lifecycle is the rows' one writer.
import type { Db, Queryable } from '../db/db.js';

/** How far a pair's spacing may grow by doubling: the provider lets a burst borrow minutes ahead. */
export const PAIR_SPACING_CAP_FACTOR = 16;
/** A paced pair is forgotten this many base spacings after its last refusal (6 s: one hour). */
export const PAIR_FORGET_FACTOR = 600;

/** The refused pairs of an outcome batch; one row each, locked in key order (no deadlock between batches). */
export async function learnPairLimits(
  tx: Queryable,
  refused: { accountId: string; recipient: string }[],
  baseSpacingMs: number,
): Promise<void> {
  if (refused.length === 0) return;
  const keys = [...new Map(refused.map((r) => [`${r.accountId}\u0000${r.recipient}`, r])).values()].sort((a, b) =>
    a.accountId === b.accountId ? (a.recipient < b.recipient ? -1 : 1) : a.accountId < b.accountId ? -1 : 1,
  );
  // A live row doubles its spacing (capped); a new or forgotten one starts at the base spacing.
  await tx.query(
    `INSERT INTO recipient_pacing AS p (chat_account_id, recipient, spacing_ms, next_at, expires_at)
     SELECT t.a, t.r, $3::int, now() + make_interval(secs => $3::float8 / 1000),
            now() + make_interval(secs => $3::float8 * $5 / 1000)
       FROM unnest($1::uuid[], $2::text[]) AS t(a, r) ORDER BY t.a, t.r
     ON CONFLICT (chat_account_id, recipient) DO UPDATE SET
       spacing_ms = CASE WHEN p.expires_at > now() THEN least(p.spacing_ms * 2, $3::int * $4::int) ELSE $3::int END,
       next_at = now() + make_interval(secs => (CASE WHEN p.expires_at > now()
                   THEN least(p.spacing_ms * 2, $3::int * $4::int) ELSE $3::int END)::float8 / 1000),
       expires_at = EXCLUDED.expires_at`,
    [
      keys.map((k) => k.accountId),
      keys.map((k) => k.recipient),
      Math.round(baseSpacingMs),
      PAIR_SPACING_CAP_FACTOR,
      PAIR_FORGET_FACTOR,
    ],
  );
}

/** A paced pair's row as the claim reads it: `taken` when this claim took its turn. */
export type PairTurn = {
  chat_account_id: string;
  recipient: string;
  next_at: Date;
  spacing_ms: number;
  taken: boolean;
};

/**
 * The pacing rows of these pairs still live; one statement: each whose turn has come is moved on
 * by its spacing (taken by this claim; dispatch/recipient-pacing.ts splits the claim by them), and
 * other workers see the moved turn.
 */
export async function takePairTurns(
  db: Pick<Db, 'query'>,
  pairs: { accountId: string; recipient: string }[],
): Promise<PairTurn[]> {
  return db.query<PairTurn>(
    `WITH want AS (SELECT * FROM unnest($1::uuid[], $2::text[]) AS w(a, r)),
     taken AS (
       UPDATE recipient_pacing p SET next_at = now() + make_interval(secs => p.spacing_ms::float8 / 1000)
         FROM want WHERE p.chat_account_id = want.a AND p.recipient = want.r
          AND p.expires_at > now() AND p.next_at <= now()
       RETURNING p.chat_account_id, p.recipient)
     SELECT p.chat_account_id, p.recipient, p.next_at, p.spacing_ms, (t.recipient IS NOT NULL) AS taken
       FROM recipient_pacing p
       JOIN want ON p.chat_account_id = want.a AND p.recipient = want.r
       LEFT JOIN taken t ON t.chat_account_id = p.chat_account_id AND t.recipient = p.recipient
      WHERE p.expires_at > now()`,
    [pairs.map((p) => p.accountId), pairs.map((p) => p.recipient)],
  );
}

/** Forgets the pairs no longer paced (the purge pass): a few rows, one statement. */
export async function forgetPairs(db: Pick<Db, 'query'>): Promise<void> {
  await db.query(`DELETE FROM recipient_pacing WHERE expires_at <= now()`);
}
