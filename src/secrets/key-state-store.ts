// The one writer of encryption_key_state (ARCHITECTURE.md, "Who writes what"): the key ids
// recorded at start (key-check.ts) and the end of a rotation (rekey.ts).
import type { Queryable } from '../db/db.js';

/** The first start: the key the secrets are sealed with (and the previous one, if given). */
export async function recordKeyState(tx: Pick<Queryable, 'query'>, current: string, previous: string | null) {
  await tx.query('INSERT INTO encryption_key_state (current_key_id, previous_key_id) VALUES ($1, $2)', [
    current,
    previous,
  ]);
}

/** A rotation starts: the new key is current, the old one previous until rekey finishes. */
export async function startRotation(tx: Pick<Queryable, 'query'>, current: string, previous: string | null) {
  await tx.query('UPDATE encryption_key_state SET current_key_id = $1, previous_key_id = $2, updated_at = now()', [
    current,
    previous,
  ]);
}

/** Rekey left nothing under another key: the previous key id is cleared. */
export async function finishRotation(db: Pick<Queryable, 'query'>, current: string) {
  await db.query(
    'UPDATE encryption_key_state SET previous_key_id = NULL, updated_at = now() WHERE current_key_id = $1',
    [current],
  );
}
