import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { parseInboundMessages, parseTemplateChanges } from './parse-webhook.js';

describe('parseTemplateChanges', () => {
  it('reads the three template fields, routed by the entry id, at the entry time', () => {
    const id = {
      message_template_id: 1689556908129835,
      message_template_name: 'cart',
      message_template_language: 'en',
    };
    const payload = {
      entry: [
        {
          id: '102290129340398',
          time: 1751247548,
          changes: [
            {
              field: 'message_template_status_update',
              value: { event: 'REJECTED', ...id, reason: 'INVALID_FORMAT', message_template_category: 'MARKETING' },
            },
            {
              field: 'message_template_quality_update',
              value: { ...id, previous_quality_score: 'GREEN', new_quality_score: 'RED' },
            },
            {
              field: 'template_category_update',
              value: { ...id, previous_category: 'UTILITY', new_category: 'MARKETING' },
            },
            { field: 'messages', value: { statuses: [] } },
            { field: 'message_template_status_update', value: { ...id } }, // no event: skipped
          ],
        },
      ],
    };
    const { changes, skipped } = parseTemplateChanges(payload);
    expect(skipped).toBe(1);
    const at = new Date(1751247548 * 1000);
    const base = {
      wabaId: '102290129340398',
      templateId: '1689556908129835',
      name: 'cart',
      language: 'en',
      occurredAt: at,
    };
    expect(changes).toEqual([
      { ...base, kind: 'status', value: 'REJECTED', reason: 'INVALID_FORMAT', category: 'MARKETING' },
      { ...base, kind: 'quality', value: 'RED', reason: null, category: null },
      { ...base, kind: 'category', value: 'MARKETING', reason: null, category: null },
    ]);
  });

  it('never throws on arbitrary input', () => {
    fc.assert(fc.property(fc.anything(), (v) => void expect(() => parseTemplateChanges(v)).not.toThrow()));
  });
});

describe('parseInboundMessages and user ids', () => {
  const payload = (message: Record<string, unknown>, contacts: unknown[] = []) => ({
    entry: [{ changes: [{ value: { metadata: { phone_number_id: 'pn' }, contacts, messages: [message] } }] }],
  });
  const base = { id: 'wamid.1', timestamp: '1751247548' };

  it('takes the user id from from_user_id, or from the contact of the number', () => {
    const [a] = parseInboundMessages(payload({ ...base, from_user_id: 'US.1', type: 'text' })).messages;
    expect(a).toMatchObject({ fromPhone: null, userId: 'US.1' });
    const [b] = parseInboundMessages(
      payload({ ...base, from: '16505551234', type: 'text' }, [{ wa_id: '16505551234', user_id: 'US.2' }]),
    ).messages;
    expect(b).toMatchObject({ fromPhone: '+16505551234', userId: 'US.2' });
    expect(b!.previousUserId).toBeUndefined();
  });

  it('reads user_changed_user_id: the previous id and the new one', () => {
    const [m] = parseInboundMessages(
      payload({
        ...base,
        from_user_id: 'US.new',
        type: 'system',
        system: { type: 'user_changed_user_id', previous_user_id: 'US.old', body: 'changed' },
      }),
    ).messages;
    expect(m).toMatchObject({ userId: 'US.new', previousUserId: 'US.old', messageType: 'system' });
  });
});
