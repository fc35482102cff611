// Every inbound kind the provider posts (decision 0033), from the provider's documented payloads
// (test/fixtures/inbound-kinds.json), posted by the emulator through the real, signed provider
// webhook: parsed, stored, listed and read back through the API with its content, the same content
// in message.inbound; button and list replies linked to our message; reactions shown on our
// message; tenant isolation; the metric by kind.
import fs from 'node:fs';
import http from 'node:http';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, createKey, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { metricSum } from './support/prometheus-text.js';

type Event = { type: string; data: Record<string, any> };
type Fixture = { entry: { changes: { value: { messages: Record<string, any>[] } }[] }[] };

const fixtures = JSON.parse(
  fs.readFileSync(new URL('./fixtures/inbound-kinds.json', import.meta.url), 'utf8'),
) as Record<string, Fixture>;
/** The documented message of a kind (`value.messages[0]`). */
const documented = (kind: string) => structuredClone(fixtures[kind]!.entry[0]!.changes[0]!.value.messages[0]!);

const CONTENT_KEYS = [
  'media',
  'interactive',
  'button',
  'reaction',
  'location',
  'contacts',
  'system',
  'unsupported',
  'providerErrors',
  'context',
] as const;
/** The fetch of a file (decision 0034) is shown by the inbox alone: the event is written before it. */
const FETCH_KEYS = new Set(['state', 'size', 'attempts', 'error', 'fetchedAt']);
const described = (m: Record<string, any>) => Object.fromEntries(Object.entries(m).filter(([k]) => !FETCH_KEYS.has(k)));
/** The content fields that have a value (the event carries only those; the API has every one). */
const contentOf = (o: Record<string, any>) =>
  Object.fromEntries(
    CONTENT_KEYS.filter((k) => o[k] !== undefined && o[k] !== null && !(Array.isArray(o[k]) && o[k].length === 0)).map(
      (k) => [k, k === 'media' ? described(o[k]) : o[k]],
    ),
  );

describe('inbound messages of every kind', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;
  const t0 = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
  });
  afterAll(() => stop());
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  /** Posts a message of a kind through the emulator (signed provider webhook); its wamid. */
  const inbound = async (
    t: OfficialCustomer,
    message: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        phoneNumberId: t.phoneNumberIds[0],
        from: '16505551234',
        name: 'Sheena Nelson',
        timestamp: t0 + n++,
        message,
        ...extra,
      }),
    });
    const answer = (await res.json()) as { id: string; delivered: boolean };
    expect(answer.delivered).toBe(true);
    return answer.id;
  };
  const events = async (customerId: string) =>
    (
      await svc.db.query<Event>(
        `SELECT type, data FROM events WHERE customer_id = $1 AND type = 'message.inbound' ORDER BY created_at, id`,
        [customerId],
      )
    ).map((e) => e.data);
  const inbox = async (t: OfficialCustomer) =>
    (await call(svc.url, 'GET', '/inbound-messages?limit=100', { key: t.key })).body.inboundMessages as Record<
      string,
      any
    >[];
  /** Our message, sent and acknowledged by the provider: its id and provider id. */
  const sentMessage = async (t: OfficialCustomer) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: `k-${n++}`,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: '+16505551234' },
        content: { type: 'text', text: 'Choose' },
      },
    });
    expect(res.status).toBe(201);
    const messageId = res.body.messageId as string;
    const sent = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${messageId}`, { key: t.key })).body;
      return m.status === 'sent' && m;
    });
    return { messageId, providerMessageId: sent.providerMessageId as string };
  };

  it('media, location, contacts, system, unsupported and forwarded text: stored, listed, read and in the event', async () => {
    const t = await officialCustomer(svc.url, emu);
    const kinds = ['image', 'video', 'audio', 'document', 'sticker', 'location', 'contacts', 'system', 'unsupported'];
    for (const kind of [...kinds, 'forwarded_text']) await inbound(t, documented(kind));
    const items = (await inbox(t)).reverse();
    const data = await events(t.customerId);
    expect(items.map((i) => i.messageType)).toEqual([
      'image',
      'video',
      'voice_note',
      'document',
      'sticker',
      'location',
      'contact',
      'system',
      'unsupported',
      'text',
    ]);
    const [image, video, audio, document, sticker, location, contacts, system, unsupported, forwarded] = items;
    expect(image).toMatchObject({
      text: 'Broken parcel',
      media: {
        kind: 'image',
        providerMediaId: '2754859441498128',
        mimeType: 'image/jpeg',
        sha256: '81d3bd8a8db4868c9520ed47186e8b7c5789e61ff79f7f834be6950b808a90d3',
        caption: 'Broken parcel',
        filename: null,
        voice: null,
        animated: null,
      },
      interactive: null,
      reaction: null,
      context: null,
      providerErrors: [],
    });
    expect(video!.media).toMatchObject({ kind: 'video', mimeType: 'video/mp4', caption: 'Unboxing' });
    expect(audio!.media).toMatchObject({
      kind: 'audio',
      providerMediaId: '1003383421387256',
      mimeType: 'audio/ogg; codecs=opus',
      voice: true,
      caption: null,
    });
    expect(document!.media).toMatchObject({
      kind: 'document',
      filename: 'lucky-shrub-invoice.pdf',
      caption: 'Lucky Shrub Invoice',
      mimeType: 'application/pdf',
    });
    expect(sticker!.media).toMatchObject({ kind: 'sticker', mimeType: 'image/webp', animated: false, voice: null });
    expect(location!.location).toEqual({
      latitude: 37.44216251868683,
      longitude: -122.16153582049394,
      name: 'Philz Coffee',
      address: '101 Forest Ave, Palo Alto, CA 94301',
      url: 'https://philzcoffee.com/',
    });
    expect(location!.media).toBeNull();
    expect(contacts!.contacts).toEqual([
      {
        name: { formattedName: 'Barbara J. Johnson', firstName: 'Barbara', lastName: 'Johnson' },
        phones: [{ phone: '+1 (650) 555-1234', waId: '16505551234', type: 'WORK' }],
        emails: [{ email: 'bjohnson@luckyshrub.com', type: 'WORK' }],
        organization: { company: 'Lucky Shrub', department: 'Legal', title: 'Lead Counsel' },
        urls: [{ url: 'https://www.luckyshrub.com', type: 'WORK' }],
        birthday: '1999-01-23',
      },
    ]);
    expect(system!.system).toEqual({
      type: 'user_changed_number',
      body: 'User Sheena Nelson changed from 16505551234 to 16505554321',
    });
    expect(unsupported).toMatchObject({
      unsupported: { type: 'poll_update' },
      providerErrors: [
        { code: 131051, title: 'Message type unknown', details: 'Message type is currently not supported.' },
      ],
    });
    expect(forwarded).toMatchObject({
      text: 'Does it come in another color?',
      context: { forwarded: true, frequentlyForwarded: false, referredProduct: null },
      replyTo: null,
    });
    // The event carries the same content as the API; GET /inbound-messages/{id} the same as the list.
    expect(data.map((d) => d.inboundMessageId)).toEqual(items.map((i) => i.inboundMessageId));
    expect(data.map(contentOf)).toEqual(items.map(contentOf));
    expect(data.map((d) => Object.keys(contentOf(d)))).toEqual([
      ...['image', 'video', 'audio', 'document', 'sticker'].map(() => ['media']),
      ['location'],
      ['contacts'],
      ['system'],
      ['unsupported', 'providerErrors'],
      ['context'],
    ]);
    for (const item of [image!, contacts!]) {
      const one = await call(svc.url, 'GET', `/inbound-messages/${item.inboundMessageId}`, { key: t.key });
      expect(one.status).toBe(200);
      expect(one.body).toEqual(item);
    }
  });

  it('button and list replies and a template quick-reply name what was chosen and which of our messages it answered', async () => {
    const t = await officialCustomer(svc.url, emu);
    const ours = await sentMessage(t);
    for (const kind of ['interactive_button_reply', 'interactive_list_reply', 'button'])
      await inbound(t, documented(kind), { contextId: ours.providerMessageId });
    const items = (await inbox(t)).reverse();
    const replyTo = {
      providerMessageId: ours.providerMessageId,
      messageId: ours.messageId,
      externalId: expect.any(String),
    };
    expect(items).toMatchObject([
      {
        messageType: 'interactive',
        text: 'Cancel',
        interactive: { type: 'button_reply', id: 'cancel-button', title: 'Cancel', description: null },
        replyTo,
      },
      {
        messageType: 'interactive',
        text: 'Priority Mail Express',
        interactive: {
          type: 'list_reply',
          id: 'priority_express',
          title: 'Priority Mail Express',
          description: 'Next Day to 2 Days',
        },
        replyTo,
      },
      {
        messageType: 'button',
        text: 'Unsubscribe',
        button: { payload: 'Unsubscribe from Promos', text: 'Unsubscribe' },
        replyTo,
      },
    ]);
    const data = await events(t.customerId);
    expect(data.map((d) => [d.interactive ?? null, d.button ?? null, d.replyTo.messageId])).toEqual(
      items.map((i) => [i.interactive, i.button, ours.messageId]),
    );
  });

  it('a reaction names our message and shows on it; a removal takes it away; an older one delivered late does not return', async () => {
    const t = await officialCustomer(svc.url, emu);
    const ours = await sentMessage(t);
    const reactions = async () =>
      (await call(svc.url, 'GET', `/messages/${ours.messageId}`, { key: t.key })).body.reactions as unknown[];
    expect(await reactions()).toEqual([]);
    const react = (kind: string, timestamp: number) => {
      const m = documented(kind);
      m.reaction.message_id = ours.providerMessageId;
      return inbound(t, m, { timestamp });
    };
    await react('reaction', t0 + 1000);
    const [item] = await inbox(t);
    expect(item).toMatchObject({
      messageType: 'reaction',
      reaction: { emoji: '\u{1F44D}', providerMessageId: ours.providerMessageId, messageId: ours.messageId },
    });
    const [event] = await events(t.customerId);
    expect(event!.reaction).toEqual(item!.reaction);
    expect(await reactions()).toEqual([
      {
        emoji: '\u{1F44D}',
        from: '+16505551234',
        fromUserId: null,
        reactedAt: new Date((t0 + 1000) * 1000).toISOString(),
        inboundMessageId: item!.inboundMessageId,
      },
    ]);
    await react('reaction_removed', t0 + 1002);
    expect((await inbox(t))[0]!.reaction).toMatchObject({ emoji: null, messageId: ours.messageId });
    expect(await reactions()).toEqual([]);
    await react('reaction', t0 + 1001); // older than the removal, delivered after it
    expect(await reactions()).toEqual([]);
  });

  it('tenant isolation: another customer, a key scoped to another account and a sandbox key never see it', async () => {
    const a = await officialCustomer(svc.url, emu, { accounts: 2 });
    const b = await officialCustomer(svc.url, emu);
    const ours = await sentMessage(a);
    await inbound(a, documented('image'));
    const [item] = await inbox(a);
    const path = `/inbound-messages/${item!.inboundMessageId}`;
    expect((await call(svc.url, 'GET', path, { key: b.key })).body.error).toBe('inbound_message_not_found');
    expect((await call(svc.url, 'GET', path, { key: b.key })).status).toBe(404);
    const otherScope = await createKey(svc.url, a.customerId, { chatAccountId: a.accountIds[1] });
    expect((await call(svc.url, 'GET', path, { key: otherScope })).status).toBe(404);
    const ownScope = await createKey(svc.url, a.customerId, { chatAccountId: a.accountIds[0] });
    expect((await call(svc.url, 'GET', path, { key: ownScope })).status).toBe(200);
    const sandbox = await createKey(svc.url, a.customerId, { sandbox: true });
    expect((await call(svc.url, 'GET', path, { key: sandbox })).status).toBe(404);
    // B's user reacting to A's provider message id through B's number reaches neither message.
    const m = documented('reaction');
    m.reaction.message_id = ours.providerMessageId;
    await inbound(b, m);
    expect((await inbox(b))[0]!.reaction).toMatchObject({ messageId: null, externalId: null });
    expect((await call(svc.url, 'GET', `/messages/${ours.messageId}`, { key: a.key })).body.reactions).toEqual([]);
    // Outside plan Pro the inbox item is not there to read.
    const basic = await officialCustomer(svc.url, emu, { plan: 'basic' });
    expect((await call(svc.url, 'GET', path, { key: basic.key })).status).toBe(403);
  });

  it('bounds: a caption is cut at 1024 characters and at most 20 contact cards are kept', async () => {
    const t = await officialCustomer(svc.url, emu);
    const image = documented('image');
    image.image.caption = 'x'.repeat(3000);
    await inbound(t, image);
    const contacts = documented('contacts');
    contacts.contacts = Array.from({ length: 30 }, () => contacts.contacts[0]);
    await inbound(t, contacts);
    const [cards, photo] = await inbox(t);
    expect(photo!.media.caption).toHaveLength(1024);
    expect(cards!.contacts).toHaveLength(20);
  });

  it('the emulator refuses a kind the provider does not post', async () => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: 'pn', from: '16505551234', message: { type: 'hologram', hologram: {} } }),
    });
    expect(res.status).toBe(400);
  });

  it("forwarding rules match a message's text: a caption and a list reply's title, not a button id; the body carries the content", async () => {
    const got: Record<string, any>[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          got.push(JSON.parse(body) as Record<string, any>);
          res.writeHead(204).end();
        });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/forward`;
    try {
      const t = await officialCustomer(svc.url, emu);
      for (const pattern of ['parcel', 'priority mail', 'cancel-button'])
        expect(
          (
            await call(svc.url, 'POST', '/forwarding-rules', {
              key: t.key,
              body: { condition: { type: 'contains', pattern }, destination: { type: 'http', url } },
            })
          ).status,
        ).toBe(201);
      const done = () => metricSum(svc.url, 'chatgate_inbound_forwarding_total');
      const before = await done();
      await inbound(t, documented('image')); // caption "Broken parcel"
      await inbound(t, documented('interactive_list_reply')); // title "Priority Mail Express"
      await inbound(t, documented('interactive_button_reply')); // id "cancel-button", title "Cancel"
      await eventually(async () => (await done()) >= before + 3);
      expect(got.map((b) => b.messageType).sort()).toEqual(['image', 'interactive']);
      expect(got.find((b) => b.messageType === 'image')!.media).toMatchObject({ caption: 'Broken parcel' });
      expect(got.find((b) => b.messageType === 'interactive')!.interactive).toMatchObject({ id: 'priority_express' });
    } finally {
      await new Promise((r) => receiver.close(r));
    }
  });

  it('counts inbound messages by kind', async () => {
    const t = await officialCustomer(svc.url, emu);
    const count = (kind: string) => metricSum(svc.url, 'chatgate_inbound_messages_by_kind_total', { kind });
    const [voice, location] = [await count('voice_note'), await count('location')];
    await inbound(t, documented('audio'));
    await inbound(t, documented('location'));
    await inbound(t, documented('location'));
    expect(await count('voice_note')).toBe(voice + 1);
    expect(await count('location')).toBe(location + 2);
  });
});
