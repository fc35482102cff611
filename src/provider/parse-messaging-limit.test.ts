import { describe, expect, it } from 'vitest';

import { parseMessagingLimitChanges } from './parse-messaging-limit.js';

const payload = (field: string, value: Record<string, unknown>, id: unknown = '1020') => ({
  object: 'whatsapp_business_account',
  entry: [{ id, time: 1739321024, changes: [{ field, value }] }],
});

describe('messaging limit webhooks', () => {
  it('reads business_capability_update, the per-business field first, -1 as unlimited', () => {
    const one = parseMessagingLimitChanges(
      payload('business_capability_update', {
        max_daily_conversation_per_phone: 250,
        max_daily_conversations_per_business: 2000,
      }),
    );
    expect(one.changes).toEqual([{ wabaId: '1020', limit: 2000, field: 'business_capability_update' }]);
    const old = parseMessagingLimitChanges(
      payload('business_capability_update', { max_daily_conversation_per_phone: -1 }),
    );
    expect(old.changes[0]!.limit).toBeNull();
    const counts = parseMessagingLimitChanges(payload('business_capability_update', { max_phone_numbers_per_waba: 2 }));
    expect(counts.changes).toEqual([]);
  });

  it('reads phone_number_quality_update tiers, not a throughput upgrade', () => {
    const tier = parseMessagingLimitChanges(
      payload(
        'phone_number_quality_update',
        {
          display_phone_number: '15550783881',
          event: 'UPGRADE',
          current_limit: 'TIER_2K',
          max_daily_conversations_per_business: 'TIER_10K',
        },
        1020,
      ),
    );
    expect(tier.changes).toEqual([{ wabaId: '1020', limit: 10_000, field: 'phone_number_quality_update' }]);
    const legacy = parseMessagingLimitChanges(
      payload('phone_number_quality_update', { event: 'DOWNGRADE', current_limit: 'TIER_250' }),
    );
    expect(legacy.changes[0]!.limit).toBe(250);
    const throughput = parseMessagingLimitChanges(
      payload('phone_number_quality_update', { event: 'THROUGHPUT_UPGRADE', current_limit: 'TIER_UNLIMITED' }),
    );
    expect(throughput.changes).toEqual([]);
  });
});
