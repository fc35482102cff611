// The one scope rule of every read of customer data (decisions 0024-sandbox-keys, 0070): the
// customer first, the account a key is scoped to (or the one asked for), then the sandbox rule of
// the table read. Each table's sandbox rule is written once, in SCOPED_TABLES; every list and get
// takes its WHERE conditions from scopeWhere, so no read can forget the tenant or the sandbox.

/**
 * What a read covers: the customer, the account the key is scoped to (or the one asked for), and
 * `sandboxOnly` for a sandbox key, which never reads live data (decision 0024-sandbox-keys).
 * Built from a caller by auth/caller.ts's readScope.
 */
export type Scope = { customerId: string; accountId: string | null; sandboxOnly?: boolean };

/**
 * How a table keeps sandbox data apart from live data.
 * - `marked`: rows carry a `sandbox` flag; a sandbox scope reads flagged rows only, a live scope
 *   reads both (messages: live keys and the portal see sandbox messages, marked `sandbox: true`).
 * - `partitioned`: each row is in the live or the sandbox world (`sandbox` column); each scope
 *   reads its own world only (webhook endpoints, forwarding rules).
 * - `live`: live data only; a sandbox scope reads nothing (broadcasts, the inbox, usage…).
 */
export type SandboxRule = 'marked' | 'partitioned' | 'live';

/**
 * The customer tables reads are scoped on: their sandbox rule, and whether a key scoped to one
 * account is narrowed to it there (`chat_account_id`); customer-wide tables are read only by
 * unscoped keys (requireUnscoped) or whole (the quota).
 */
export const SCOPED_TABLES = {
  messages: { sandbox: 'marked', byAccount: true },
  broadcasts: { sandbox: 'live', byAccount: true },
  inbound_messages: { sandbox: 'live', byAccount: true },
  senders: { sandbox: 'live', byAccount: true },
  suppressions: { sandbox: 'live', byAccount: true },
  usage_daily: { sandbox: 'live', byAccount: true },
  usage_pricing_daily: { sandbox: 'live', byAccount: true },
  quota_usage: { sandbox: 'live', byAccount: false },
  webhook_endpoints: { sandbox: 'partitioned', byAccount: false },
  forwarding_rules: { sandbox: 'partitioned', byAccount: false },
} as const satisfies Record<string, { sandbox: SandboxRule; byAccount: boolean }>;

export type ScopedTable = keyof typeof SCOPED_TABLES;

/**
 * The scope's conditions on `table` (ANDed), its values appended to `params` and numbered after
 * those already there. `alias` prefixes the columns (`m` for `m.customer_id`).
 */
export function scopeWhere(scope: Scope, table: ScopedTable, params: unknown[], alias?: string): string[] {
  const rule = SCOPED_TABLES[table];
  const col = (name: string) => (alias ? `${alias}.${name}` : name);
  const where: string[] = [];
  params.push(scope.customerId);
  where.push(`${col('customer_id')} = $${params.length}`);
  if (rule.byAccount && scope.accountId !== null) {
    params.push(scope.accountId);
    where.push(`${col('chat_account_id')} = $${params.length}::uuid`);
  }
  const sandboxOnly = scope.sandboxOnly === true;
  if (rule.sandbox === 'marked' && sandboxOnly) where.push(col('sandbox'));
  else if (rule.sandbox === 'live' && sandboxOnly) where.push('false');
  else if (rule.sandbox === 'partitioned') {
    params.push(sandboxOnly);
    where.push(`${col('sandbox')} = $${params.length}`);
  }
  return where;
}

/**
 * Whether the scope can find nothing in `table` (a sandbox key reading live data): the service
 * answers an empty list (its cursor still checked) or not found without a query.
 */
export function seesNothing(scope: Scope, table: ScopedTable): boolean {
  return scope.sandboxOnly === true && SCOPED_TABLES[table].sandbox === 'live';
}
