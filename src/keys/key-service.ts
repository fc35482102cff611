// API keys: only a SHA-256 hash is used for lookup; an encrypted copy lets the portal reveal a key.
import crypto from 'node:crypto';

import type { Directory } from '../auth/directory.js';
import { lockCustomer } from '../customers/customer-service.js';
import type { Db } from '../db/db.js';
import type { Sealer } from '../shared/crypto.js';
import { randomHex, sha256Hex } from '../shared/crypto.js';
import { errors } from '../shared/errors.js';
import { UUID_PATTERN } from '../shared/schemas.js';
import type { TemplateAccess } from '../shared/vocab.js';
import { insertKey, revokeKey } from './key-store.js';

export const MAX_ACTIVE_KEYS = 5;
export const LIVE_PREFIX = 'ak_live_';
export const TEST_PREFIX = 'ak_test_';

/** 8-character prefix + 64 hex characters (256 random bits) = 72 characters. */
export function generateKey(sandbox: boolean): string {
  return `${sandbox ? TEST_PREFIX : LIVE_PREFIX}${randomHex(32)}`;
}

export function maskKey(prefix: string, hint: string): string {
  return `${prefix}${'*'.repeat(8)}${hint}`;
}

/** A key in words (the audit log's): its masked form and its name. */
export function keyWords(k: { maskedKey: string; name: string | null }): string {
  return k.name ? `${k.maskedKey} (${k.name})` : k.maskedKey;
}

/** Keys created before this have only their hash (the previous system kept no encrypted copy). */
export const REVEALABLE_SINCE = new Date('2026-06-01T00:00:00Z');

/** A row of the service's COLUMNS as the database returns it (`key_enc`: whether an encrypted copy exists). */
type KeyRow = {
  id: string;
  name: string | null;
  sandbox: boolean;
  chat_account_id: string | null;
  template_access: TemplateAccess;
  key_hint: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  key_enc: boolean;
};

function isRevealable(r: { key_enc: boolean | string | null; created_at: Date }): boolean {
  return r.key_enc !== null && r.key_enc !== false && r.created_at >= REVEALABLE_SINCE;
}

function toKeyView(r: KeyRow) {
  const sandbox = r.sandbox;
  return {
    id: r.id,
    name: r.name,
    sandbox,
    chatAccountId: r.chat_account_id,
    templateAccess: r.template_access,
    maskedKey: maskKey(sandbox ? TEST_PREFIX : LIVE_PREFIX, r.key_hint),
    createdAt: r.created_at.toISOString(),
    revokedAt: r.revoked_at ? r.revoked_at.toISOString() : null,
    lastUsedAt: r.last_used_at ? r.last_used_at.toISOString() : null,
    revealable: isRevealable(r) && !r.revoked_at,
  };
}

type KeyServiceDeps = { db: Db; sealer: Sealer; directory: Pick<Directory, 'invalidate'> };

const COLUMNS =
  'id, name, sandbox, chat_account_id, template_access, key_hint, created_at, revoked_at, last_used_at, key_enc IS NOT NULL AS key_enc';

type CreateKeyInput = {
  sandbox?: boolean;
  chatAccountId?: string | null;
  templateAccess?: TemplateAccess;
  name?: string | null;
};

async function createKey(deps: KeyServiceDeps, customerId: string, input: CreateKeyInput) {
  const { db, sealer } = deps;
  return db.transaction(async (tx) => {
    // Locking the customer row serialises key creation, so the active-key cap holds under concurrency.
    if (!(await lockCustomer(tx, customerId))) throw errors.notFound('customer');
    if (input.chatAccountId) {
      // Not every caller validated the id's form (the portal's form does not): not a UUID is not an account.
      const owned = !new RegExp(UUID_PATTERN).test(input.chatAccountId)
        ? []
        : await tx.query('SELECT 1 FROM chat_accounts WHERE id = $1 AND customer_id = $2', [
            input.chatAccountId,
            customerId,
          ]);
      if (owned.length === 0) throw errors.invalidChatAccount();
    }
    const [{ n } = { n: 0 }] = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM api_keys WHERE customer_id = $1 AND revoked_at IS NULL',
      [customerId],
    );
    if (n >= MAX_ACTIVE_KEYS) throw errors.limitReached('active API keys per customer', MAX_ACTIVE_KEYS);
    const sandbox = input.sandbox ?? false;
    const key = generateKey(sandbox);
    const id = crypto.randomUUID();
    const row = await insertKey<KeyRow>(tx, COLUMNS, [
      id,
      customerId,
      input.chatAccountId ?? null,
      input.name ?? null,
      sandbox,
      input.templateAccess ?? 'none',
      sha256Hex(key),
      sealer.seal(key, { table: 'api_keys', column: 'key_enc', id }),
      key.slice(-4),
    ]);
    return { ...toKeyView(row), key };
  });
}

export type KeyService = ReturnType<typeof createKeyService>;

export function createKeyService(deps: KeyServiceDeps) {
  const { db, sealer, directory } = deps;
  return {
    async create(customerId: string, input: CreateKeyInput) {
      return createKey(deps, customerId, input);
    },

    async list(customerId: string) {
      const rows = await db.query<KeyRow>(
        `SELECT ${COLUMNS} FROM api_keys WHERE customer_id = $1 ORDER BY created_at, id`,
        [customerId],
      );
      return rows.map(toKeyView);
    },

    /** How many more keys may be created now (the cap counts active keys). */
    async remaining(customerId: string): Promise<number> {
      const [{ n } = { n: 0 }] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM api_keys WHERE customer_id = $1 AND revoked_at IS NULL',
        [customerId],
      );
      return Math.max(0, MAX_ACTIVE_KEYS - n);
    },

    /** The full key of an active key created since June 2026; older keys have only their hash. */
    async reveal(customerId: string, id: string): Promise<{ key: string | null }> {
      const rows = await db.query<{ key_enc: string | null; created_at: Date; revoked_at: Date | null }>(
        'SELECT key_enc, created_at, revoked_at FROM api_keys WHERE customer_id = $1 AND id = $2',
        [customerId, id],
      );
      const r = rows[0];
      if (!r || r.revoked_at) throw errors.notFound('API key');
      if (r.key_enc === null || !isRevealable(r)) return { key: null };
      return { key: sealer.open(r.key_enc, { table: 'api_keys', column: 'key_enc', id }) };
    },

    /**
     * Revocation is immediate and irreversible; revoking a revoked key is a no-op. With a
     * customer id (the portal), another customer's key is not found. Returns the key's customer.
     */
    async revoke(id: string, customerId: string | null = null): Promise<{ customerId: string }> {
      return db.transaction(async (tx) => {
        const owner = await revokeKey(tx, id, customerId);
        if (!owner) throw errors.notFound('API key');
        await directory.invalidate(tx, owner);
        return { customerId: owner };
      });
    },
  };
}
