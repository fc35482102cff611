import { describe, expect, it } from 'vitest';

import { parseUserPreferences } from './parse-webhook.js';

const payload = (items: unknown[], phoneNumberId: string | null = '1') => ({
  entry: [
    {
      changes: [
        {
          field: 'user_preferences',
          value: { metadata: phoneNumberId ? { phone_number_id: phoneNumberId } : {}, user_preferences: items },
        },
      ],
    },
  ],
});

describe('parseUserPreferences', () => {
  it('reads stop and resume with the number as E.164 and the provider time', () => {
    const { preferences, skipped } = parseUserPreferences(
      payload([
        { wa_id: '16505551234', value: 'stop', category: 'marketing_messages', detail: 'd', timestamp: 1731705721 },
        { wa_id: '16505551235', value: 'RESUME', timestamp: '1731705722' },
      ]),
    );
    expect(skipped).toBe(0);
    expect(preferences).toEqual([
      {
        phoneNumberId: '1',
        phone: '+16505551234',
        value: 'stop',
        category: 'marketing_messages',
        detail: 'd',
        occurredAt: new Date(1731705721_000),
      },
      {
        phoneNumberId: '1',
        phone: '+16505551235',
        value: 'resume',
        category: null,
        detail: null,
        occurredAt: new Date(1731705722_000),
      },
    ]);
  });

  it('skips malformed items, never the whole payload', () => {
    const { preferences, skipped } = parseUserPreferences(
      payload([
        { wa_id: '16505551234', value: 'pause', timestamp: 1 },
        { wa_id: 'US.abc', value: 'stop', timestamp: 1 },
        { wa_id: '16505551234', value: 'stop' },
        { wa_id: '16505551234', value: 'stop', timestamp: 1731705721 },
      ]),
    );
    expect(skipped).toBe(3);
    expect(preferences).toHaveLength(1);
    expect(parseUserPreferences(payload([{ wa_id: '16505551234', value: 'stop', timestamp: 1 }], null)).skipped).toBe(
      1,
    );
    expect(parseUserPreferences({ entry: 'nope' })).toEqual({ preferences: [], skipped: 0 });
  });
});
