import { describe, expect, it } from 'vitest';

import { parseInboundMessages } from './parse-webhook.js';

// Issue #35: senders known only by a user id, items never dropped, referral and order.
const payload = (messages: unknown[], contacts?: unknown[], metadata: object = { phone_number_id: 'pn' }) => ({
  entry: [{ changes: [{ value: { metadata, ...(contacts ? { contacts } : {}), messages } }] }],
});
const base = { id: 'wamid.1', timestamp: '1751247548' };

describe('parseInboundMessages: senders by user id and unreadable items', () => {
  it('takes the sender from contacts[0].user_id when the message has no from', () => {
    const { messages, skipped } = parseInboundMessages(
      payload([{ ...base, type: 'text', text: { body: 'hi' } }], [{ profile: { name: 'Ana' }, user_id: 'US.1' }]),
    );
    expect(skipped).toBe(0);
    expect(messages[0]).toMatchObject({ fromPhone: null, userId: 'US.1', fromDisplayName: 'Ana', messageType: 'text' });
    expect(messages[0]!.unapplied).toBeUndefined();
  });

  it('reads user_changed_user_id without from: new id in system.user_id, old one in the body, number in wa_id', () => {
    const system = {
      body: 'User Ana Ruiz changed from US.old1 to US.new1',
      user_id: 'US.new1',
      type: 'user_changed_user_id',
    };
    const [a] = parseInboundMessages(payload([{ ...base, type: 'system', system }])).messages;
    expect(a).toMatchObject({ userId: 'US.new1', previousUserId: 'US.old1', fromPhone: null, messageType: 'system' });
    const [b] = parseInboundMessages(
      payload([{ ...base, type: 'system', system: { ...system, wa_id: '16505551234' } }]),
    ).messages;
    expect(b).toMatchObject({ userId: 'US.new1', fromPhone: '+16505551234' });
    // Only the body names the ids; words that are not ids are not taken.
    const [c] = parseInboundMessages(
      payload([
        { ...base, type: 'system', system: { type: 'user_changed_user_id', body: 'User X changed from a to US.n2' } },
      ]),
    ).messages;
    expect(c).toMatchObject({ userId: 'US.n2' });
    expect(c!.previousUserId).toBeUndefined();
  });

  it('keeps an item it cannot read as unsupported, with its raw type and the reason', () => {
    const { messages, unrouted } = parseInboundMessages(
      payload([
        { ...base, type: 'text', text: { body: 'who' } },
        { from: '16505551234', timestamp: '1751247548', type: 'location', location: {} },
        { ...base, id: 'wamid.2', from: '16505551234', timestamp: 'soon', type: 'text' },
        'garbage',
      ]),
    );
    expect(messages.map((m) => [m.messageType, m.unapplied, m.content?.unsupported?.type])).toEqual([
      ['unsupported', 'no_sender', 'text'],
      ['unsupported', 'no_id', 'location'],
      ['unsupported', 'bad_timestamp', 'text'],
      ['unsupported', 'not_an_object', null],
    ]);
    expect(messages[0]!.text).toBe('who');
    // An id-less item is named by its bytes: the same item twice, the same name.
    const again = parseInboundMessages(
      payload([{ from: '16505551234', timestamp: '1751247548', type: 'location', location: {} }]),
    );
    expect(again.messages[0]!.providerMessageId).toBe(messages[1]!.providerMessageId);
    expect(messages[1]!.providerMessageId).toMatch(/^unidentified\.[0-9a-f]{40}$/);
    expect(unrouted).toEqual([]);
    const orphan = parseInboundMessages(payload([{ ...base, from: '1650555', type: 'text' }], undefined, {}));
    expect(orphan).toMatchObject({ messages: [], skipped: 1, unrouted: [{ rawType: 'text' }] });
  });

  it('reads a referral on any kind and an order with its items', () => {
    const referral = {
      source_url: 'https://fb.me/x',
      source_id: '1',
      source_type: 'ad',
      ctwa_clid: 'c',
      headline: 'H',
    };
    const [a] = parseInboundMessages(
      payload([{ ...base, from: '16505551234', type: 'image', image: { id: 'm1' }, referral }]),
    ).messages;
    expect(a!.content!.referral).toMatchObject({
      sourceUrl: 'https://fb.me/x',
      sourceType: 'ad',
      ctwaClid: 'c',
      videoUrl: null,
    });
    const [b] = parseInboundMessages(
      payload([
        {
          ...base,
          from: '16505551234',
          type: 'order',
          order: {
            catalog_id: 'cat',
            text: 'note',
            product_items: [{ product_retailer_id: 's', quantity: 2, item_price: 7.99, currency: 'USD' }],
          },
        },
      ]),
    ).messages;
    expect(b).toMatchObject({ messageType: 'order', text: 'note', displayText: '[order: 1 item]' });
    expect(b!.content!.order).toEqual({
      catalogId: 'cat',
      text: 'note',
      productItems: [{ productRetailerId: 's', quantity: 2, itemPrice: 7.99, currency: 'USD' }],
    });
    expect(b!.content!.referral).toBeNull();
  });
});
