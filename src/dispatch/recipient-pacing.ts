// Per-recipient pacing learned from the provider's pair rate limit (131056; decision 0037). A
// refusal gives the (chat account, recipient) pair a spacing: the pair's next send waits that long,
// and each later one waits its turn, while the account's other recipients keep its full pace (a
// held message takes no account slot). A further refusal while the pair is paced doubles the
// spacing, up to a cap; a pair with no refusal for a long while is forgotten. Only pairs that met
// the limit have a row; while none has, a process asks at most once a second (createPairPacing).

/** How long a process trusts that no pair is paced before asking again. */
const NONE_PACED_TTL_MS = 1000;
import type { Db, Queryable } from '../db/db.js';
import type { Claimed } from '../lifecycle/claim.js';

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

export type PacedSplit = {
  /** Messages that may be booked now (unpaced pairs, and the one message of each paced pair whose turn it is). */
  go: Claimed[];
  /** Messages of paced pairs held until the pair's next turn (no attempt used, no account slot taken). */
  held: { m: Claimed; until: Date }[];
};

/**
 * Splits claimed messages by their pair's pacing. One statement: each paced pair whose turn has
 * come is moved on by its spacing (taken by this claim); other workers see the moved turn.
 */
export async function splitByPairPacing(db: Pick<Db, 'query'>, messages: Claimed[]): Promise<PacedSplit> {
  if (messages.length === 0) return { go: messages, held: [] };
  const pairs = [...new Map(messages.map((m) => [pairKey(m.chatAccountId, m.recipient), m])).values()];
  const rows = await db.query<{
    chat_account_id: string;
    recipient: string;
    next_at: Date;
    spacing_ms: number;
    taken: boolean;
  }>(
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
    [pairs.map((m) => m.chatAccountId), pairs.map((m) => m.recipient)],
  );
  if (rows.length === 0) return { go: messages, held: [] };
  const paced = new Map(rows.map((r) => [pairKey(r.chat_account_id, r.recipient), r]));
  const out: PacedSplit = { go: [], held: [] };
  const turns = new Map<string, number>();
  // Tried before, sent first: a message the provider refused goes ahead of the pair's newer ones.
  for (const m of [...messages].sort((a, b) => b.attemptCount - a.attemptCount)) {
    const key = pairKey(m.chatAccountId, m.recipient);
    const row = paced.get(key);
    if (!row) {
      out.go.push(m);
      continue;
    }
    // The taken turn is now; the pair's next turns follow one spacing apart (the statement's
    // snapshot shows next_at before its own update, so a taken pair counts from now).
    const turn = turns.get(key) ?? (row.taken ? 0 : 1);
    turns.set(key, turn + 1);
    if (turn === 0) out.go.push(m);
    else {
      const from = row.taken ? Date.now() : Math.max(Date.now(), row.next_at.getTime() - row.spacing_ms);
      out.held.push({ m, until: new Date(from + turn * row.spacing_ms) });
    }
  }
  return out;
}

const pairKey = (accountId: string, recipient: string) => `${accountId}\u0000${recipient}`;

export type PairPacing = ReturnType<typeof createPairPacing>;

/**
 * The dispatcher's view of pair pacing: the split above, skipped while no pair is paced (checked at
 * most once a second, so the common claim costs nothing; a pair another process learns is seen
 * within that second). A refusal recorded by this process ends the skip at once.
 */
export function createPairPacing(db: Pick<Db, 'query'>) {
  let nonePacedUntil = 0;
  return {
    learned: () => void (nonePacedUntil = 0),
    async split(messages: Claimed[]): Promise<PacedSplit> {
      if (messages.length === 0 || Date.now() < nonePacedUntil) return { go: messages, held: [] };
      const [row] = await db.query<{ any: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM recipient_pacing WHERE expires_at > now()) AS any`,
      );
      if (row?.any) return splitByPairPacing(db, messages);
      nonePacedUntil = Date.now() + NONE_PACED_TTL_MS;
      return { go: messages, held: [] };
    },
  };
}
