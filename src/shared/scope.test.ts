import { describe, expect, it } from 'vitest';

import { SCOPED_TABLES, scopeWhere, seesNothing } from './scope.js';

const live = { customerId: 'c1', accountId: null, sandboxOnly: false };
const sandbox = { ...live, sandboxOnly: true };
const scoped = { customerId: 'c1', accountId: 'a1', sandboxOnly: false };

describe('scopeWhere', () => {
  it('starts from the customer, numbering after the parameters already there', () => {
    const params: unknown[] = ['x'];
    expect(scopeWhere(live, 'messages', params)).toEqual(['customer_id = $2']);
    expect(params).toEqual(['x', 'c1']);
  });

  it('narrows a scoped key to its account on tables read by account, never on customer-wide ones', () => {
    const params: unknown[] = [];
    expect(scopeWhere(scoped, 'inbound_messages', params, 'i')).toEqual([
      'i.customer_id = $1',
      'i.chat_account_id = $2::uuid',
    ]);
    expect(params).toEqual(['c1', 'a1']);
    expect(scopeWhere(scoped, 'quota_usage', [])).toEqual(['customer_id = $1']);
  });

  it('marked rows (messages): a sandbox scope reads flagged ones only, a live scope both', () => {
    expect(scopeWhere(sandbox, 'messages', [], 'm')).toEqual(['m.customer_id = $1', 'm.sandbox']);
    expect(scopeWhere(live, 'messages', [])).toEqual(['customer_id = $1']);
    expect(scopeWhere({ customerId: 'c1', accountId: null }, 'messages', [])).toEqual(['customer_id = $1']);
  });

  it('live-only tables: a sandbox scope reads nothing', () => {
    for (const table of ['broadcasts', 'inbound_messages', 'senders', 'suppressions', 'usage_daily'] as const) {
      expect(scopeWhere(sandbox, table, [])).toEqual(['customer_id = $1', 'false']);
      expect(seesNothing(sandbox, table)).toBe(true);
      expect(scopeWhere(live, table, [])).toEqual(['customer_id = $1']);
      expect(seesNothing(live, table)).toBe(false);
    }
  });

  it('partitioned tables: each scope reads its own world', () => {
    for (const [scope, flag] of [
      [live, false],
      [sandbox, true],
    ] as const) {
      const params: unknown[] = [];
      expect(scopeWhere(scope, 'webhook_endpoints', params)).toEqual(['customer_id = $1', 'sandbox = $2']);
      expect(params).toEqual(['c1', flag]);
      expect(seesNothing(scope, 'forwarding_rules')).toBe(false);
    }
  });

  it('every table has a rule', () => {
    for (const rule of Object.values(SCOPED_TABLES)) expect(['marked', 'partitioned', 'live']).toContain(rule.sandbox);
  });
});
