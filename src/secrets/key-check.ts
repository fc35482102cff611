// The encryption key check at start: the database records the id of the key its secrets are
// sealed with (and, during a rotation, the previous key's id until rekey finishes); a process
// whose ENCRYPTION_KEY (and ENCRYPTION_KEY_PREVIOUS) do not match refuses to start, instead of
// starting and then failing every send on a token it cannot open.
import type { Db, Queryable } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import { recordKeyState, startRotation } from './key-state-store.js';
import { keyOf, SEALED_COLUMNS, sealedAt } from './sealed-columns.js';

const LOCK_KEY = 727_002; // arbitrary, constant: the key-state lock (migrations use 727_001)

/** A refusal to start, in one line that names the variable to fix. */
export class EncryptionKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncryptionKeyError';
  }
}

export type KeyState = { currentKeyId: string; previousKeyId: string | null };

export async function readKeyState(db: Pick<Queryable, 'query'>): Promise<KeyState | null> {
  const rows = await db.query<{ current_key_id: string; previous_key_id: string | null }>(
    'SELECT current_key_id, previous_key_id FROM encryption_key_state',
  );
  return rows[0] ? { currentKeyId: rows[0].current_key_id, previousKeyId: rows[0].previous_key_id } : null;
}

/** Whether one sealed value already stored (if any) opens with this process's keys. */
async function opensExisting(tx: Queryable, sealer: Sealer): Promise<boolean> {
  for (const c of SEALED_COLUMNS) {
    const rows = await tx.query<{ id: string; sealed: string }>(
      `SELECT ${keyOf(c).column}::text AS id, ${c.column} AS sealed FROM ${c.table} WHERE ${c.column} IS NOT NULL LIMIT 1`,
    );
    const r = rows[0];
    if (!r) continue;
    try {
      sealer.open(r.sealed, sealedAt(c, r.id));
    } catch {
      return false;
    }
    return true;
  }
  return true;
}

/**
 * Checks this process's keys against the database, and records them when the database has none
 * yet (a new database, or one sealed before key ids: one stored value must open) or when this
 * process starts a rotation (its ENCRYPTION_KEY_PREVIOUS is the database's current key). `source`
 * names where ENCRYPTION_KEY came from, for the message. Returns what changed, for the log.
 */
export async function checkEncryptionKey(
  db: Db,
  sealer: Sealer,
  source = 'ENCRYPTION_KEY',
): Promise<'recorded' | 'rotation started' | 'ok'> {
  const mine = sealer.keyId;
  const prev = sealer.previousKeyId;
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const state = await readKeyState(tx);
    if (!state) {
      if (!(await opensExisting(tx, sealer)))
        throw new EncryptionKeyError(
          `${source} does not open the secrets already in this database: start every process with the key that sealed them` +
            (prev ? '' : ' (or, to rotate, that key as ENCRYPTION_KEY_PREVIOUS and the new one as ENCRYPTION_KEY)'),
        );
      await recordKeyState(tx, mine, prev);
      return 'recorded';
    }
    if (state.currentKeyId === mine) {
      if (state.previousKeyId !== null && state.previousKeyId !== prev)
        throw new EncryptionKeyError(
          `ENCRYPTION_KEY_PREVIOUS must be the previous key (id ${state.previousKeyId}) until \`chatgate admin rekey\` has re-sealed every secret` +
            (prev ? ` (it is key ${prev})` : ' (it is not set)'),
        );
      return 'ok';
    }
    if (prev !== null && state.currentKeyId === prev) {
      if (state.previousKeyId !== null)
        throw new EncryptionKeyError(
          `the rotation from key ${state.previousKeyId} to key ${state.currentKeyId} has not finished: run \`chatgate admin rekey\` before rotating to ${source} (id ${mine})`,
        );
      await startRotation(tx, mine, prev);
      return 'rotation started';
    }
    throw new EncryptionKeyError(
      `${source} is not the key this database's secrets are sealed with (database key id ${state.currentKeyId}` +
        `${state.previousKeyId ? `, previous ${state.previousKeyId}` : ''}; ${source} has id ${mine}` +
        `${prev ? `, ENCRYPTION_KEY_PREVIOUS ${prev}` : ''}): start every process with the same ENCRYPTION_KEY`,
    );
  });
}
