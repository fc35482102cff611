// Every column that holds a value sealed with ENCRYPTION_KEY (src/shared/crypto.ts), for the key
// check at start and `rekey`. A test compares this list with the schema's `*_enc` columns.
import type { SealedAt } from '../shared/crypto.js';

export type SealedColumn = {
  table: string;
  column: string;
  /** The column named in the associated data (a previous secret keeps its binding as the secret). */
  boundAs?: string;
  /** The row's key, bound as its id: `id` (uuid) unless named here. */
  key?: { column: string; type: 'uuid' | 'text' };
};

/** The key column of a sealed column's rows, its type, and where a scan in key order starts. */
export const keyOf = (c: SealedColumn) => {
  const key = c.key ?? { column: 'id', type: 'uuid' as const };
  return { ...key, first: key.type === 'uuid' ? '00000000-0000-0000-0000-000000000000' : '' };
};

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'chat_accounts', column: 'access_token_enc' },
  { table: 'chat_accounts', column: 'app_secret_enc' },
  { table: 'chat_accounts', column: 'management_token_enc' },
  { table: 'api_keys', column: 'key_enc' },
  // The current secret before the previous one: a rotation that moves a value from the first to
  // the second while rekey runs is still found.
  { table: 'webhook_endpoints', column: 'secret_enc' },
  { table: 'webhook_endpoints', column: 'previous_secret_enc', boundAs: 'secret_enc' },
  // A secret the portal shows once after a redirect (minutes at most), bound to its hashed id.
  { table: 'portal_shown_once', column: 'value_enc', key: { column: 'id_hash', type: 'text' } },
  // A portal user's TOTP secret (two-factor sign-in), bound to the user's id.
  { table: 'portal_totp', column: 'secret_enc', key: { column: 'user_id', type: 'uuid' } },
];

export const sealedAt = (c: SealedColumn, id: string): SealedAt => ({
  table: c.table,
  column: c.boundAs ?? c.column,
  id,
});
