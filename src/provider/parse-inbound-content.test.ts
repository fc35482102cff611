import { describe, expect, it } from 'vitest';

import { inboundContent } from './parse-inbound-content.js';

describe('inbound content by kind', () => {
  it('a reaction removed: emoji absent or empty reads as null', () => {
    for (const reaction of [{ message_id: 'wamid.A' }, { message_id: 'wamid.A', emoji: '' }])
      expect(inboundContent({ type: 'reaction', reaction }).reaction).toEqual({
        emoji: null,
        providerMessageId: 'wamid.A',
      });
  });

  it('cuts by code point (an emoji is never split) and reads numbers given as strings', () => {
    const c = inboundContent({
      type: 'location',
      location: { latitude: '37.5', longitude: 'west', name: `${'x'.repeat(1023)}\u{1F44D}more` },
    });
    expect(c.location).toMatchObject({ latitude: 37.5, longitude: null, name: `${'x'.repeat(1023)}\u{1F44D}` });
  });

  it("a Flow's answer: response_json parsed with its token; invalid JSON kept as text; a long one cut; unstorable characters replaced", () => {
    const reply = (response_json: unknown) =>
      inboundContent({
        type: 'interactive',
        interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json } },
      }).interactive!.flowReply;
    expect(reply('{"flow_token":"tok-1","rating":5,"tags":["a"]}')).toEqual({
      name: 'flow',
      body: 'Sent',
      response: { flow_token: 'tok-1', rating: 5, tags: ['a'] },
      responseRaw: null,
      invalidJson: false,
      truncated: false,
      flowToken: 'tok-1',
    });
    expect(reply('{"flow_token": ')).toMatchObject({
      response: null,
      responseRaw: '{"flow_token": ',
      invalidJson: true,
    });
    const long = `{"a":"${'x'.repeat(20_000)}"}`;
    expect(reply(long)).toMatchObject({ response: null, invalidJson: false, truncated: true });
    expect(reply(long)!.responseRaw).toHaveLength(20_000);
    expect(reply('{"a":"x\\u0000y","\\ud800":1}')!.response).toEqual({ a: 'x\uFFFDy', '\uFFFD': 1 });
    expect(reply(42)).toMatchObject({ response: null, responseRaw: null, invalidJson: false });
  });

  it('an unknown interactive reply keeps its type; malformed objects give nulls, never a throw', () => {
    expect(
      inboundContent({ type: 'interactive', interactive: { type: 'nfm_reply', nfm_reply: {} } }).interactive,
    ).toEqual({
      type: 'nfm_reply',
      id: null,
      title: null,
      description: null,
      flowReply: {
        name: null,
        body: null,
        response: null,
        responseRaw: null,
        invalidJson: false,
        truncated: false,
        flowToken: null,
      },
    });
    expect(inboundContent({ type: 'image', image: 'nope' }).media).toMatchObject({
      kind: 'image',
      providerMediaId: null,
    });
    expect(inboundContent({ type: 'contacts', contacts: 'nope' }).contacts).toEqual([]);
    expect(inboundContent({ type: 'text', context: { frequently_forwarded: true } }).context).toEqual({
      forwarded: true,
      frequentlyForwarded: true,
      referredProduct: null,
    });
  });

  // (`order` was this example until issue #35 kept orders: parse-inbound-sender.test.ts.)
  it('a kind it does not parse (request_welcome) keeps no content', () => {
    const c = inboundContent({ type: 'request_welcome', request_welcome: { catalog_id: 'c' } });
    expect(Object.values(c).filter((v) => v !== null && !(Array.isArray(v) && v.length === 0))).toEqual([]);
  });
});
