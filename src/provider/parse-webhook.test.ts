import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { parseStatusReceipts } from './parse-webhook.js';

describe('parseStatusReceipts', () => {
  it('reads every status of every change of every entry', () => {
    const value = (pn: string, statuses: unknown[]) => ({
      field: 'messages',
      value: { metadata: { phone_number_id: pn }, statuses },
    });
    const payload = {
      entry: [
        {
          changes: [
            value('1', [
              {
                id: 'wamid.a',
                status: 'sent',
                timestamp: '1750030073',
                biz_opaque_callback_data: '6F1C2C9E-9D7A-4B7E-8A57-0A3B1C2D3E4F',
                pricing: { billable: false, pricing_model: 'PMP', type: 'free_entry_point', category: 'marketing' },
              },
            ]),
          ],
        },
        {
          changes: [
            value('2', [
              {
                id: 'wamid.b',
                status: 'played',
                timestamp: '1750030074',
                recipient_user_id: 'US.1',
                pricing: { category: 7 },
              },
              {
                id: 'wamid.c',
                status: 'failed',
                timestamp: '1750030075',
                errors: [{ code: 131049, title: 'T', error_data: { details: 'D' } }],
              },
            ]),
          ],
        },
      ],
    };
    const { receipts, skipped } = parseStatusReceipts(payload);
    expect(skipped).toBe(0);
    expect(receipts).toEqual([
      {
        phoneNumberId: '1',
        providerMessageId: 'wamid.a',
        status: 'sent',
        occurredAt: new Date(1750030073000),
        messageId: '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f',
        error: null,
        pricing: { billable: false, pricingModel: 'PMP', type: 'free_entry_point', category: 'marketing' },
        recipientUserId: null,
      },
      {
        phoneNumberId: '2',
        providerMessageId: 'wamid.b',
        status: 'read',
        occurredAt: new Date(1750030074000),
        messageId: null,
        error: null,
        pricing: null, // nothing it names is usable
        recipientUserId: 'US.1',
      },
      {
        phoneNumberId: '2',
        providerMessageId: 'wamid.c',
        status: 'failed',
        occurredAt: new Date(1750030075000),
        messageId: null,
        error: { code: 131049, title: 'T', details: 'D' },
        pricing: null,
        recipientUserId: null,
      },
    ]);
  });
  it('never throws on any input', () => {
    fc.assert(
      fc.property(fc.anything(), (v) => {
        expect(() => parseStatusReceipts(v)).not.toThrow();
      }),
    );
  });
});
