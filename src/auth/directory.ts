// Who is calling and what they own, cached per process so the send hot path costs no query
// for authentication or account resolution. Every change to keys, customers or accounts
// NOTIFYs `chatgate_cache` in its own transaction; each process drops the entry it names.
// Revocation is also re-checked inside the send transaction, so no message is ever written
// with a key whose revocation has committed.
import { ACCOUNT_COLUMNS, type AccountRecord, type AccountRow, toAccountRecord } from '../accounts/account-record.js';
import type { Db, Queryable } from '../db/db.js';
import { notify } from '../db/db.js';
import type { Plan } from '../plans/plans.js';
import { sha256Hex } from '../shared/crypto.js';
import type { TemplateAccess } from '../shared/vocab.js';

export type Principal = {
  /** The API key, or null for a portal user (src/portal). */
  keyId: string | null;
  customerId: string;
  sandbox: boolean;
  /** The one chat account a scoped key is limited to, or null. */
  scopeAccountId: string | null;
  templateAccess: TemplateAccess;
};

export type Tenant = {
  customerId: string;
  plan: Plan;
  defaultCountry: string | null;
  accounts: AccountRecord[];
};

const CHANNEL = 'chatgate_cache';
const TTL_MS = 60_000; // safety net should a notification be missed
const MAX_ENTRIES = 50_000;

type Entry<T> = { value: T; at: number };

async function loadPrincipal(db: Db, hash: string): Promise<Principal | null> {
  const rows = await db.query<{
    id: string;
    customer_id: string;
    sandbox: boolean;
    chat_account_id: string | null;
    template_access: TemplateAccess;
  }>(
    `SELECT id, customer_id, sandbox, chat_account_id, template_access FROM api_keys
      WHERE key_hash = $1 AND revoked_at IS NULL`,
    [hash],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    keyId: r.id,
    customerId: r.customer_id,
    sandbox: r.sandbox,
    scopeAccountId: r.chat_account_id,
    templateAccess: r.template_access,
  };
}

async function loadTenant(db: Db, customerId: string): Promise<Tenant | null> {
  const [customers, accounts] = await Promise.all([
    db.query<{ plan: Plan; default_country: string | null }>(
      'SELECT plan, default_country FROM customers WHERE id = $1',
      [customerId],
    ),
    db.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM chat_accounts WHERE customer_id = $1 ORDER BY created_at, id`,
      [customerId],
    ),
  ]);
  const c = customers[0];
  if (!c) return null;
  return {
    customerId,
    plan: c.plan,
    defaultCountry: c.default_country,
    accounts: accounts.map(toAccountRecord),
  };
}

export type Directory = ReturnType<typeof createDirectory>;

export function createDirectory(db: Db) {
  const keys = new Map<string, Entry<Principal | null>>();
  const tenants = new Map<string, Entry<Tenant | null>>();
  const keyHashesByCustomer = new Map<string, Set<string>>();

  function fresh<T>(e: Entry<T> | undefined): e is Entry<T> {
    return e !== undefined && Date.now() - e.at < TTL_MS;
  }
  function put<T>(map: Map<string, Entry<T>>, k: string, value: T) {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(k, { value, at: Date.now() });
  }

  // Bumped by every invalidation: a load that started before one is not cached (it may be stale).
  let generation = 0;

  function drop(payload: string) {
    generation++;
    const [kind, id] = payload.split(':');
    if (kind === 'customer' && id) {
      tenants.delete(id);
      for (const h of keyHashesByCustomer.get(id) ?? []) keys.delete(h);
      keyHashesByCustomer.delete(id);
    } else {
      keys.clear();
      tenants.clear();
    }
  }

  return {
    async start(): Promise<() => Promise<void>> {
      // On (re)connect everything is dropped: invalidations sent while disconnected are lost.
      return db.listen(CHANNEL, drop, () => drop('all'));
    },

    /** The principal of a raw API key, or null when unknown or revoked. */
    async authenticate(rawKey: string): Promise<Principal | null> {
      const hash = sha256Hex(rawKey);
      const cached = keys.get(hash);
      if (fresh(cached)) return cached.value;
      const before = generation;
      const principal = await loadPrincipal(db, hash);
      if (generation !== before) return principal; // an invalidation raced the load: do not cache it
      put(keys, hash, principal);
      if (principal) {
        const set = keyHashesByCustomer.get(principal.customerId) ?? new Set<string>();
        set.add(hash);
        keyHashesByCustomer.set(principal.customerId, set);
      }
      return principal;
    },

    async tenant(customerId: string): Promise<Tenant | null> {
      const cached = tenants.get(customerId);
      if (fresh(cached)) return cached.value;
      const before = generation;
      const tenant = await loadTenant(db, customerId);
      if (generation === before) put(tenants, customerId, tenant);
      return tenant;
    },

    /** Call inside the transaction that changes a customer, its accounts or keys. */
    async invalidate(tx: Queryable, customerId: string): Promise<void> {
      drop(`customer:${customerId}`); // this process at once; the others on commit
      await notify(tx, CHANNEL, `customer:${customerId}`);
    },
  };
}
