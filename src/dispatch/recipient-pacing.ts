// Per-recipient pacing learned from the provider's pair rate limit (131056; decision 0037). A
// refusal gives the (chat account, recipient) pair a spacing: the pair's next send waits that long,
// and each later one waits its turn, while the account's other recipients keep its full pace (a
// held message takes no account slot). A further refusal while the pair is paced doubles the
// spacing, up to a cap; a pair with no refusal for a long while is forgotten. Only pairs that met
// the limit have a row; while none has, a process asks at most once a second (createPairPacing).

/** How long a process trusts that no pair is paced before asking again. */
const NONE_PACED_TTL_MS = 1000;
import type { Db } from '../db/db.js';
import type { Claimed } from '../lifecycle/claim.js';
import { takePairTurns } from '../lifecycle/pace-recipient.js';

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
  const rows = await takePairTurns(
    db,
    pairs.map((m) => ({ accountId: m.chatAccountId, recipient: m.recipient })),
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
