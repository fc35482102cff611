// `chatgate admin rekey` (POST /admin/encryption/rekey): re-seals every sealed value that is not
// under the current key in the current format, row by row, while the service runs. Each value
// is replaced only if it is still the one read (a concurrent change wins); values that do not
// open are counted, left alone, and keep the rotation open. When nothing is left under another
// key, the previous key id is cleared from the key state: ENCRYPTION_KEY_PREVIOUS may go.
import type { Db } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import { operatorErrors } from '../shared/errors.js';
import { readKeyState } from './key-check.js';
import { finishRotation } from './key-state-store.js';
import { keyOf, SEALED_COLUMNS, sealedAt } from './sealed-columns.js';

const BATCH = 200;

export type RekeyResult = {
  keyId: string;
  /** The key still needed to open some values, or null when every value is under keyId. */
  previousKeyId: string | null;
  resealed: number;
  /** Values still not under keyId (unreadable ones included): run rekey again once they are fixed. */
  remaining: number;
  /** Values neither key opens (or bound to another row): left as they are. */
  unreadable: number;
};

export function createRekey(deps: { db: Db; sealer: Sealer }) {
  const { db, sealer } = deps;
  const notCurrent = `v2.${sealer.keyId}.%`;

  async function countRemaining(): Promise<number> {
    let n = 0;
    for (const c of SEALED_COLUMNS) {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${c.table} WHERE ${c.column} IS NOT NULL AND ${c.column} NOT LIKE $1`,
        [notCurrent],
      );
      n += row?.n ?? 0;
    }
    return n;
  }

  return {
    async run(): Promise<RekeyResult> {
      // Only a process running with the database's current key re-seals: one started before the
      // rotation would seal everything back under the old key.
      const before = await readKeyState(db);
      if (before && before.currentKeyId !== sealer.keyId)
        throw operatorErrors.keyMismatch(
          `this process seals with key ${sealer.keyId}, the database's current key is ${before.currentKeyId}: restart it with the new ENCRYPTION_KEY (and ENCRYPTION_KEY_PREVIOUS) first`,
        );
      let resealed = 0;
      let unreadable = 0;
      for (const c of SEALED_COLUMNS) {
        const key = keyOf(c);
        let after = key.first;
        for (;;) {
          const rows = await db.query<{ id: string; sealed: string }>(
            `SELECT ${key.column}::text AS id, ${c.column} AS sealed FROM ${c.table}
              WHERE ${c.column} IS NOT NULL AND ${c.column} NOT LIKE $1 AND ${key.column} > $2::${key.type}
              ORDER BY ${key.column} LIMIT ${BATCH}`,
            [notCurrent, after],
          );
          for (const r of rows) {
            let plain: string;
            try {
              plain = sealer.open(r.sealed, sealedAt(c, r.id));
            } catch {
              unreadable++;
              continue;
            }
            const changed = await db.query(
              `UPDATE ${c.table} SET ${c.column} = $3 WHERE ${key.column} = $1::${key.type} AND ${c.column} = $2 RETURNING 1`,
              [r.id, r.sealed, sealer.seal(plain, sealedAt(c, r.id))],
            );
            resealed += changed.length;
          }
          if (rows.length < BATCH) break;
          after = rows[rows.length - 1]!.id;
        }
      }
      const remaining = await countRemaining();
      if (remaining === 0) await finishRotation(db, sealer.keyId);
      const state = await readKeyState(db);
      return {
        keyId: sealer.keyId,
        previousKeyId: state?.currentKeyId === sealer.keyId ? state.previousKeyId : sealer.previousKeyId,
        resealed,
        remaining,
        unreadable,
      };
    },
  };
}

export type Rekey = ReturnType<typeof createRekey>;
