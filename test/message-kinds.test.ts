// The content kinds added beyond the spec (decision 0032), through the real pipeline: accepted,
// validated at the provider's limits, sent with the exact provider payload (the emulator checks
// each kind as the provider does and records what it took), receipts applied, events written;
// replies and reactions within one conversation of one customer; the sandbox's cycles.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, startLiveService } from './support/emulator.js';
import { type FileServer, startFileServer } from './support/file-server.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';
import { JPEG_BYTES, upload } from './support/media-files.js';
import { parseSamples, sampleValue } from './support/prometheus-text.js';

const pad = (head: Buffer | string, size: number) => {
  const h = Buffer.isBuffer(head) ? head : Buffer.from(head, 'latin1');
  return Buffer.concat([h, Buffer.alloc(Math.max(0, size - h.length), 1)]);
};
const OGG_OPUS = pad(Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead')]), 300);
const MP4_VIDEO = pad(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom')]), 400);
const webp = (size: number, animated: boolean) =>
  pad(
    Buffer.concat([
      Buffer.from('RIFF'),
      Buffer.alloc(4),
      Buffer.from(animated ? 'WEBPVP8X' : 'WEBPVP8 '),
      Buffer.from([10, 0, 0, 0, animated ? 0x02 : 0]),
    ]),
    size,
  );

const TO = '+15551239001';
const METRICS_TOKEN = 'metrics-token-kinds-0123456789';

describe('message kinds beyond the spec', () => {
  let emu: Emulator;
  let files: FileServer;
  let svc: Service;
  let stop: () => Promise<void>;
  let n = 0;
  const ext = () => `kind-${n++}`;

  beforeAll(async () => {
    files = await startFileServer();
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true', METRICS_TOKEN }));
  });
  afterAll(async () => {
    await stop();
    await files.close();
  });
  beforeEach(() => emu.clearRules());

  const tenant = async (plan = 'pro') => {
    const customer = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Kinds', plan } });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-kinds-token' },
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      key: await createKey(svc.url, customer.body.id, {}),
      sandboxKey: await createKey(svc.url, customer.body.id, { sandbox: true }),
    };
  };
  const post = (key: string, content: unknown, extra: Record<string, unknown> = {}) =>
    call(svc.url, 'POST', '/messages', {
      key,
      body: { externalId: ext(), to: { type: 'phone', phoneE164: TO }, content, ...extra },
    });
  const send = async (key: string, content: unknown, extra: Record<string, unknown> = {}) => {
    const res = await post(key, content, extra);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.messageId as string;
  };
  const waitStatus = (key: string, id: string, statuses: string[]) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
      return statuses.includes(m.status) ? m : undefined;
    });
  const sentRecord = (id: string) => emu.state.sent.find((s) => s.messageId === id);
  const payloadOf = (id: string) => sentRecord(id)?.payload;
  const uploadedAs = (phoneNumberId: string, sha: string) =>
    [...emu.state.media.entries()].find(([, m]) => m.phoneNumberId === phoneNumberId && m.sha256 === sha)?.[0];
  const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
  const statusEvents = async (id: string) =>
    (
      await svc.db.query<{ data: { status: string } }>(
        `SELECT data FROM events WHERE type = 'message.status' AND data->>'messageId' = $1 ORDER BY created_at`,
        [id],
      )
    ).map((r) => r.data.status);
  const envelope = (id: string) => ({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: TO.slice(1),
    biz_opaque_callback_data: id,
  });

  it('sends each kind with the provider payload, applies its receipts and writes its events', async () => {
    const t = await tenant();
    const audioId = (await upload(svc.url, t.key, OGG_OPUS, 'note.ogg')).body.mediaId;
    const stickerId = (await upload(svc.url, t.key, webp(2000, false), 'smile.webp')).body.mediaId;
    const headerId = (await upload(svc.url, t.key, JPEG_BYTES, 'header.jpg')).body.mediaId;
    files.put('/clip.mp4', { body: MP4_VIDEO, headers: { 'content-type': 'video/mp4' } });
    const contact = {
      name: { formattedName: 'Ada Lovelace', firstName: 'Ada', lastName: 'Lovelace' },
      phones: [{ phone: '+15551230001', type: 'WORK', waId: '15551230001' }],
      emails: [{ email: 'ada@example.com', type: 'WORK' }],
      org: { company: 'Analytical Engines', title: 'Engineer' },
      urls: [{ url: 'https://example.com/ada', type: 'WORK' }],
    };
    const file = (bytes: Buffer) => uploadedAs(t.phoneNumberId, sha(bytes));
    const cases: { content: Record<string, unknown>; part: () => Record<string, unknown> }[] = [
      { content: { type: 'audio', audio: { mediaId: audioId } }, part: () => ({ audio: { id: file(OGG_OPUS) } }) },
      {
        content: { type: 'video', video: { url: `${files.url}/clip.mp4` }, caption: 'The parcel' },
        part: () => ({ video: { id: file(MP4_VIDEO), caption: 'The parcel' } }),
      },
      {
        content: { type: 'sticker', sticker: { mediaId: stickerId } },
        part: () => ({ sticker: { id: file(webp(2000, false)) } }),
      },
      {
        content: { type: 'location', location: { latitude: -33.8568, longitude: 151.2153, name: 'Opera House' } },
        // The provider's current form: the coordinates as strings (issue #35).
        part: () => ({ location: { latitude: '-33.8568', longitude: '151.2153', name: 'Opera House' } }),
      },
      {
        content: { type: 'contacts', contacts: [contact] },
        part: () => ({
          contacts: [
            {
              name: { formatted_name: 'Ada Lovelace', first_name: 'Ada', last_name: 'Lovelace' },
              phones: [{ phone: '+15551230001', type: 'WORK', wa_id: '15551230001' }],
              emails: [{ email: 'ada@example.com', type: 'WORK' }],
              org: { company: 'Analytical Engines', title: 'Engineer' },
              urls: [{ url: 'https://example.com/ada', type: 'WORK' }],
            },
          ],
        }),
      },
      {
        content: {
          type: 'interactive',
          interactive: {
            type: 'button',
            header: { type: 'image', image: { mediaId: headerId } },
            body: { text: 'Was your parcel damaged?' },
            footer: { text: 'Support' },
            buttons: [
              { id: 'yes', title: 'Yes' },
              { id: 'no', title: 'No' },
            ],
          },
        },
        part: () => ({
          interactive: {
            type: 'button',
            header: { type: 'image', image: { id: file(JPEG_BYTES) } },
            body: { text: 'Was your parcel damaged?' },
            footer: { text: 'Support' },
            action: {
              buttons: [
                { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
                { type: 'reply', reply: { id: 'no', title: 'No' } },
              ],
            },
          },
        }),
      },
      {
        content: {
          type: 'interactive',
          interactive: {
            type: 'list',
            header: { type: 'text', text: 'Delivery' },
            body: { text: 'Pick a slot' },
            list: {
              button: 'Slots',
              sections: [
                { title: 'Morning', rows: [{ id: 'm9', title: '9:00', description: 'Before noon' }] },
                { title: 'Evening', rows: [{ id: 'e6', title: '18:00' }] },
              ],
            },
          },
        },
        part: () => ({
          interactive: {
            type: 'list',
            header: { type: 'text', text: 'Delivery' },
            body: { text: 'Pick a slot' },
            action: {
              button: 'Slots',
              sections: [
                { title: 'Morning', rows: [{ id: 'm9', title: '9:00', description: 'Before noon' }] },
                { title: 'Evening', rows: [{ id: 'e6', title: '18:00' }] },
              ],
            },
          },
        }),
      },
      {
        content: {
          type: 'interactive',
          interactive: {
            type: 'cta_url',
            body: { text: 'Track your order' },
            ctaUrl: { displayText: 'Track', url: 'https://example.com/track/1042' },
          },
        },
        part: () => ({
          interactive: {
            type: 'cta_url',
            body: { text: 'Track your order' },
            action: { name: 'cta_url', parameters: { display_text: 'Track', url: 'https://example.com/track/1042' } },
          },
        }),
      },
    ];
    const ids = [];
    for (const c of cases) ids.push(await send(t.key, c.content));
    for (const [i, c] of cases.entries()) {
      const id = ids[i]!;
      const m = await waitStatus(t.key, id, ['delivered', 'failed']);
      expect(m, `${c.content.type} ${JSON.stringify(m.error)}`).toMatchObject({ status: 'delivered', attemptCount: 1 });
      expect(m.providerMessageId).toBe(sentRecord(id)!.wamid);
      expect(payloadOf(id)).toEqual({ ...envelope(id), type: c.content.type, ...c.part() });
      await eventually(async () => (await statusEvents(id)).includes('delivered'));
      expect(await statusEvents(id)).toEqual(['sent', 'delivered']);
    }
    // Send attempts are counted by kind.
    const metrics = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const samples = parseSamples(await metrics.text());
    const sends = (content_type: string) =>
      sampleValue(samples, 'chatgate_send_attempts_total', { outcome: 'sent', code: '', content_type });
    expect(sends('interactive')).toBeGreaterThanOrEqual(3);
    for (const kind of ['audio', 'video', 'sticker', 'location', 'contacts'])
      expect(sends(kind), kind).toBeGreaterThanOrEqual(1);
  });

  it('checks the file of each media kind by its content: a mismatch is 422 invalid_media', async () => {
    const t = await tenant();
    const jpeg = (await upload(svc.url, t.key, JPEG_BYTES, 'photo.ogg', 'audio/ogg')).body.mediaId;
    for (const kind of ['audio', 'video', 'sticker']) {
      const res = await post(t.key, { type: kind, [kind]: { mediaId: jpeg } });
      expect(res.status, kind).toBe(422);
      expect(res.body).toMatchObject({ error: 'invalid_media', code: 'media_type_mismatch' });
    }
    const bigStatic = (await upload(svc.url, t.key, webp(100 * 1024 + 1, false), 's.webp')).body.mediaId;
    expect((await post(t.key, { type: 'sticker', sticker: { mediaId: bigStatic } })).body).toMatchObject({
      error: 'invalid_media',
      code: 'media_type_mismatch',
      message: expect.stringMatching(/static sticker must be at most 100 KB/),
    });
    const atStatic = (await upload(svc.url, t.key, webp(100 * 1024, false), 's.webp')).body.mediaId;
    expect((await post(t.key, { type: 'sticker', sticker: { mediaId: atStatic } })).status).toBe(201);
    const animated = (await upload(svc.url, t.key, webp(500 * 1024, true), 'a.webp')).body.mediaId;
    expect((await post(t.key, { type: 'sticker', sticker: { mediaId: animated } })).status).toBe(201);
    const over = (await upload(svc.url, t.key, webp(500 * 1024 + 1, true), 'a.webp')).body.mediaId;
    expect((await post(t.key, { type: 'sticker', sticker: { mediaId: over } })).body).toMatchObject({
      code: 'media_type_mismatch',
    });
  });

  describe('limits of interactive messages, locations, contacts and reactions', () => {
    const s = (len: number, c = 'a') => c.repeat(len);
    const buttons = (k: number, title = 'Ok') => Array.from({ length: k }, (_, i) => ({ id: `b${i}`, title }));
    const rows = (k: number, prefix = 'r') =>
      Array.from({ length: k }, (_, i) => ({ id: `${prefix}${i}`, title: 'Row' }));
    const button = (i: Record<string, unknown>) => ({
      type: 'interactive',
      interactive: { type: 'button', body: { text: 'Body' }, buttons: buttons(1), ...i },
    });
    const list = (l: Record<string, unknown>, i: Record<string, unknown> = {}) => ({
      type: 'interactive',
      interactive: {
        type: 'list',
        body: { text: 'Body' },
        list: { button: 'Open', sections: [{ rows: rows(1) }], ...l },
        ...i,
      },
    });
    const cta = (c: Record<string, unknown>) => ({
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        body: { text: 'Body' },
        ctaUrl: { displayText: 'Go', url: 'https://x.test', ...c },
      },
    });
    const at = (content: unknown) => content;
    // [name, content at the limit, content one over, path named]
    const limits: [string, unknown, unknown, string][] = [
      [
        'body text 1024',
        button({ body: { text: s(1024) } }),
        button({ body: { text: s(1025) } }),
        'content.interactive.body.text',
      ],
      [
        'footer 60',
        button({ footer: { text: s(60) } }),
        button({ footer: { text: s(61) } }),
        'content.interactive.footer.text',
      ],
      [
        'header text 60',
        button({ header: { type: 'text', text: s(60) } }),
        button({ header: { type: 'text', text: s(61) } }),
        'content.interactive.header.text',
      ],
      ['3 buttons', button({ buttons: buttons(3) }), button({ buttons: buttons(4) }), 'content.interactive.buttons'],
      [
        'button id 256',
        button({ buttons: [{ id: s(256), title: 'Ok' }] }),
        button({ buttons: [{ id: s(257), title: 'Ok' }] }),
        'content.interactive.buttons.0.id',
      ],
      [
        'button title 20',
        button({ buttons: [{ id: 'x', title: s(20) }] }),
        button({ buttons: [{ id: 'x', title: s(21) }] }),
        'content.interactive.buttons.0.title',
      ],
      [
        'unique button ids',
        button({
          buttons: [
            { id: 'x', title: 'A' },
            { id: 'y', title: 'B' },
          ],
        }),
        button({
          buttons: [
            { id: 'x', title: 'A' },
            { id: 'x', title: 'B' },
          ],
        }),
        'content.interactive.buttons.1.id',
      ],
      ['list button 20', list({ button: s(20) }), list({ button: s(21) }), 'content.interactive.list.button'],
      [
        '10 sections',
        list({ sections: Array.from({ length: 10 }, (_, i) => ({ title: `S${i}`, rows: rows(1, `s${i}r`) })) }),
        list({ sections: Array.from({ length: 11 }, (_, i) => ({ title: `S${i}`, rows: rows(1, `s${i}r`) })) }),
        'content.interactive.list.sections',
      ],
      [
        '10 rows in all',
        list({
          sections: [
            { title: 'A', rows: rows(5, 'a') },
            { title: 'B', rows: rows(5, 'b') },
          ],
        }),
        list({
          sections: [
            { title: 'A', rows: rows(5, 'a') },
            { title: 'B', rows: rows(6, 'b') },
          ],
        }),
        'content.interactive.list.sections',
      ],
      [
        'row id 200',
        list({ sections: [{ rows: [{ id: s(200), title: 'R' }] }] }),
        list({ sections: [{ rows: [{ id: s(201), title: 'R' }] }] }),
        'content.interactive.list.sections.0.rows.0.id',
      ],
      [
        'row title 24',
        list({ sections: [{ rows: [{ id: 'r', title: s(24) }] }] }),
        list({ sections: [{ rows: [{ id: 'r', title: s(25) }] }] }),
        'content.interactive.list.sections.0.rows.0.title',
      ],
      [
        'row description 72',
        list({ sections: [{ rows: [{ id: 'r', title: 'R', description: s(72) }] }] }),
        list({ sections: [{ rows: [{ id: 'r', title: 'R', description: s(73) }] }] }),
        'content.interactive.list.sections.0.rows.0.description',
      ],
      [
        'section title 24',
        list({ sections: [{ title: s(24), rows: rows(1) }] }),
        list({ sections: [{ title: s(25), rows: rows(1) }] }),
        'content.interactive.list.sections.0.title',
      ],
      [
        'unique row ids',
        list({
          sections: [
            { title: 'A', rows: rows(1, 'a') },
            { title: 'B', rows: rows(1, 'b') },
          ],
        }),
        list({
          sections: [
            { title: 'A', rows: rows(1, 'x') },
            { title: 'B', rows: rows(1, 'x') },
          ],
        }),
        'content.interactive.list.sections.1.rows.0.id',
      ],
      [
        'a list header is text',
        list({}, { header: { type: 'text', text: 'H' } }),
        list({}, { header: { type: 'image', image: { url: 'https://x.test/a.jpg' } } }),
        'content.interactive.header.type',
      ],
      [
        'cta display text 20',
        cta({ displayText: s(20) }),
        cta({ displayText: s(21) }),
        'content.interactive.ctaUrl.displayText',
      ],
      [
        'cta url https',
        cta({ url: 'https://example.com/a' }),
        cta({ url: 'http://example.com/a' }),
        'content.interactive.ctaUrl.url',
      ],
      [
        'latitude -90..90',
        at({ type: 'location', location: { latitude: -90, longitude: 180 } }),
        at({ type: 'location', location: { latitude: -90.0001, longitude: 0 } }),
        'content.location.latitude',
      ],
      [
        'longitude -180..180',
        at({ type: 'location', location: { latitude: 90, longitude: -180 } }),
        at({ type: 'location', location: { latitude: 0, longitude: 180.5 } }),
        'content.location.longitude',
      ],
      [
        'a contact has a formatted name',
        at({ type: 'contacts', contacts: [{ name: { formattedName: 'A' } }] }),
        at({ type: 'contacts', contacts: [{ name: { firstName: 'A' } }] }),
        'content.contacts.0.name.formattedName',
      ],
      [
        'one or more contacts',
        at({ type: 'contacts', contacts: [{ name: { formattedName: 'A' } }] }),
        at({ type: 'contacts', contacts: [] }),
        'content.contacts',
      ],
    ];

    it.each(limits)('%s: accepted at the limit, refused one over with the path', async (_name, ok, over, path) => {
      const t = await tenant('free');
      const accepted = await post(t.sandboxKey, ok);
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
      const refused = await post(t.sandboxKey, over);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('validation_error');
      expect(refused.body.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it('sends interactive messages at every limit through the provider, which takes them', async () => {
      const t = await tenant();
      const maxButtons = button({
        header: { type: 'text', text: s(60, 'h') },
        body: { text: s(1024, 'b') },
        footer: { text: s(60, 'f') },
        buttons: [0, 1, 2].map((i) => ({ id: `${i}${s(255, 'i')}`, title: s(20, 't') })),
      });
      const maxList = list({
        button: s(20, 'o'),
        sections: Array.from({ length: 10 }, (_, i) => ({
          title: `${i}${s(23, 's')}`,
          rows: [{ id: `${i}${s(199, 'r')}`, title: s(24, 't'), description: s(72, 'd') }],
        })),
      });
      for (const content of [maxButtons, maxList]) {
        const id = await send(t.key, content);
        expect((await waitStatus(t.key, id, ['delivered', 'failed'])).status).toBe('delivered');
      }
      expect(emu.state.refused).toEqual([]);
    });

    it('refuses a reaction that is not one emoji, and a reaction or replyTo naming its target twice', async () => {
      const t = await tenant();
      const id = crypto.randomUUID();
      for (const emoji of ['ab', '👍👍', 'x']) {
        const res = await post(t.key, { type: 'reaction', reaction: { messageId: id, emoji } });
        expect(res.body.details).toContainEqual({
          path: 'content.reaction.emoji',
          message: 'must be one emoji, or empty to remove the reaction',
        });
      }
      const both = await post(t.key, { type: 'reaction', reaction: { messageId: id, externalId: 'x', emoji: '👍' } });
      expect(both.body.details.map((d: { path: string }) => d.path)).toEqual(['content.reaction']);
      const reply = await post(t.key, { type: 'text', text: 'Hi' }, { replyTo: {} });
      expect(reply.body.details.map((d: { path: string }) => d.path)).toEqual(['replyTo']);
    });
  });

  it('emulator: refuses a malformed payload of each kind with 131009 naming the field', async () => {
    const pn = `pn${crypto.randomBytes(4).toString('hex')}`;
    const graph = async (body: Record<string, unknown>) => {
      const res = await fetch(`${emu.url}/v23.0/${pn}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer EAAG-any' },
        body: JSON.stringify({ messaging_product: 'whatsapp', to: '15551230000', ...body }),
      });
      return { status: res.status, body: (await res.json()) as { error?: { code: number; message: string } } };
    };
    const bad: [Record<string, unknown>, string][] = [
      [{ type: 'location', location: { latitude: 91, longitude: 0 } }, 'location.latitude'],
      [{ type: 'contacts', contacts: [{ name: {} }] }, 'contacts.0.name.formatted_name'],
      [
        {
          type: 'interactive',
          interactive: {
            type: 'button',
            body: { text: 'b' },
            action: { buttons: [{ type: 'reply', reply: { id: 'x', title: 'x'.repeat(21) } }] },
          },
        },
        'interactive.action.buttons.0.reply.title',
      ],
      [{ type: 'reaction', reaction: { message_id: 'wamid.unknown', emoji: '👍' } }, 'reaction.message_id'],
      [{ type: 'text', text: { body: 'hi' }, context: { message_id: 'wamid.unknown' } }, 'context.message_id'],
      [{ type: 'audio', audio: { link: 'https://x.test/a.ogg', caption: 'no' } }, 'audio.caption'],
    ];
    for (const [body, field] of bad) {
      const res = await graph(body);
      expect(res.status, field).toBe(400);
      expect(res.body.error).toMatchObject({ code: 131009, message: expect.stringContaining(field) });
    }
  });

  describe('reactions and replies', () => {
    it('reacts to our message by messageId and externalId, removes it, and replies with its context', async () => {
      const t = await tenant();
      const target = await send(t.key, { type: 'text', text: 'Your parcel is on its way' });
      const targetExt = (await call(svc.url, 'GET', `/messages/${target}`, { key: t.key })).body.externalId;
      // Accepted while the target may not have left yet: the reaction waits for its provider id.
      const r1 = await send(t.key, { type: 'reaction', reaction: { messageId: target, emoji: '👍' } });
      const r2 = await send(t.key, { type: 'reaction', reaction: { externalId: targetExt, emoji: '' } });
      const reply = await send(
        t.key,
        { type: 'location', location: { latitude: 1, longitude: 2 } },
        { replyTo: { messageId: target } },
      );
      const wamid = (await waitStatus(t.key, target, ['delivered'])).providerMessageId;
      for (const id of [r1, r2, reply])
        expect((await waitStatus(t.key, id, ['delivered', 'failed'])).status).toBe('delivered');
      expect(payloadOf(r1)).toEqual({
        ...envelope(r1),
        type: 'reaction',
        reaction: { message_id: wamid, emoji: '👍' },
      });
      expect(payloadOf(r2)).toEqual({ ...envelope(r2), type: 'reaction', reaction: { message_id: wamid, emoji: '' } });
      expect(payloadOf(reply)).toEqual({
        ...envelope(reply),
        context: { message_id: wamid },
        type: 'location',
        location: { latitude: '1', longitude: '2' },
      });
      expect(await statusEvents(r1)).toEqual(['sent', 'delivered']);
    });

    it('hashes replyTo into the payload: a repeat is 200, another target 409', async () => {
      const t = await tenant();
      const first = await send(t.key, { type: 'text', text: 'One' });
      const second = await send(t.key, { type: 'text', text: 'Two' });
      const body = {
        externalId: ext(),
        to: { type: 'phone', phoneE164: TO },
        content: { type: 'text', text: 'Re' },
        replyTo: { messageId: first },
      };
      expect((await call(svc.url, 'POST', '/messages', { key: t.key, body })).status).toBe(201);
      expect((await call(svc.url, 'POST', '/messages', { key: t.key, body })).status).toBe(200);
      const other = { ...body, replyTo: { messageId: second } };
      expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: other })).body.error).toBe('conflict');
    });

    it('replies and reacts to an inbound message by inboundMessageId', async () => {
      const t = await tenant('pro');
      const posted = await fetch(`${emu.url}/__emulator/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phoneNumberId: t.phoneNumberId, from: TO, text: 'My parcel arrived broken' }),
      });
      const wamid = ((await posted.json()) as { id: string }).id;
      const inbound = await eventually(async () => {
        const list = (await call(svc.url, 'GET', '/inbound-messages', { key: t.key })).body.inboundMessages;
        return list?.[0];
      });
      const reply = await send(
        t.key,
        { type: 'text', text: 'Sorry to hear that' },
        { replyTo: { inboundMessageId: inbound.inboundMessageId } },
      );
      const reaction = await send(t.key, {
        type: 'reaction',
        reaction: { inboundMessageId: inbound.inboundMessageId, emoji: '😢' },
      });
      for (const id of [reply, reaction])
        expect((await waitStatus(t.key, id, ['delivered', 'failed'])).status).toBe('delivered');
      expect(payloadOf(reply)).toMatchObject({ context: { message_id: wamid }, type: 'text' });
      expect(payloadOf(reaction)).toEqual({
        ...envelope(reaction),
        type: 'reaction',
        reaction: { message_id: wamid, emoji: '😢' },
      });
      // Another number's conversation: a validation error naming the path.
      const elsewhere = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: {
          externalId: ext(),
          to: { type: 'phone', phoneE164: '+15551239002' },
          content: { type: 'text', text: 'Hi' },
          replyTo: { inboundMessageId: inbound.inboundMessageId },
        },
      });
      expect(elsewhere.status).toBe(400);
      expect(elsewhere.body.details[0].path).toBe('replyTo.inboundMessageId');
      // The customer's reaction (an inbound reaction) cannot be replied or reacted to.
      const replyWamid = sentRecord(reply)!.wamid;
      await fetch(`${emu.url}/__emulator/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          phoneNumberId: t.phoneNumberId,
          from: TO,
          message: { type: 'reaction', reaction: { message_id: replyWamid, emoji: '❤️' } },
        }),
      });
      const theirReaction = await eventually(async () => {
        const list = (await call(svc.url, 'GET', '/inbound-messages', { key: t.key })).body.inboundMessages;
        return list?.find((i: { messageType: string }) => i.messageType === 'reaction');
      });
      const onReaction = await post(t.key, {
        type: 'reaction',
        reaction: { inboundMessageId: theirReaction.inboundMessageId, emoji: '👍' },
      });
      expect(onReaction.body.details[0]).toMatchObject({
        path: 'content.reaction.inboundMessageId',
        message: expect.stringMatching(/is a reaction/),
      });
      // A sandbox key never sees live data: not found.
      const sandbox = await post(
        t.sandboxKey,
        { type: 'text', text: 'Hi' },
        { replyTo: { inboundMessageId: inbound.inboundMessageId } },
      );
      expect(sandbox).toMatchObject({ status: 404, body: { error: 'message_not_found' } });
    });

    it("answers another customer's message as not found, and another conversation's as a validation error", async () => {
      const a = await tenant();
      const b = await tenant();
      const theirs = await send(b.key, { type: 'text', text: 'Hello' });
      const foreign = [
        await post(a.key, { type: 'reaction', reaction: { messageId: theirs, emoji: '👍' } }),
        await post(a.key, { type: 'text', text: 'Hi' }, { replyTo: { messageId: theirs } }),
        await post(a.key, { type: 'text', text: 'Hi' }, { replyTo: { inboundMessageId: crypto.randomUUID() } }),
      ];
      for (const res of foreign) expect(res).toMatchObject({ status: 404, body: { error: 'message_not_found' } });
      const ours = await send(a.key, { type: 'text', text: 'Hello' });
      const other = await call(svc.url, 'POST', '/messages', {
        key: a.key,
        body: {
          externalId: ext(),
          to: { type: 'phone', phoneE164: '+15551239003' },
          content: { type: 'reaction', reaction: { messageId: ours, emoji: '👍' } },
        },
      });
      expect(other.status).toBe(400);
      expect(other.body.details).toEqual([
        {
          path: 'content.reaction.messageId',
          message: 'must be a message of the same conversation (the same chat account and phone number)',
        },
      ]);
      const toReaction = await send(a.key, { type: 'reaction', reaction: { messageId: ours, emoji: '👍' } });
      const onReaction = await post(a.key, { type: 'text', text: 'Hi' }, { replyTo: { messageId: toReaction } });
      expect(onReaction.body.details[0]).toMatchObject({
        path: 'replyTo.messageId',
        message: expect.stringMatching(/is a reaction/),
      });
    });

    it('fails a reaction whose target never got sent, without a provider call and with its quota back', async () => {
      const t = await tenant();
      const sendAt = new Date(Date.now() + 120_000).toISOString();
      const target = await send(t.key, { type: 'text', text: 'Later' }, { sendAt });
      const reaction = await send(t.key, { type: 'reaction', reaction: { messageId: target, emoji: '👍' } });
      expect((await call(svc.url, 'POST', `/messages/${target}/cancel`, { key: t.key })).status).toBe(200);
      const m = await waitStatus(t.key, reaction, ['failed', 'sent', 'delivered']);
      expect(m).toMatchObject({ status: 'failed', attemptCount: 0, error: { code: 'REPLY_TARGET_UNAVAILABLE' } });
      expect(sentRecord(reaction)).toBeUndefined();
      const usage = (await call(svc.url, 'GET', '/usage', { key: t.key })).body;
      expect(usage.used).toBe(0);
      // A failed target is refused at once.
      const late = await post(t.key, { type: 'reaction', reaction: { messageId: target, emoji: '👍' } });
      expect(late.body.details[0]).toMatchObject({
        path: 'content.reaction.messageId',
        message: expect.stringMatching(/failed/),
      });
    });
  });

  it('simulates new kinds for a sandbox key: the spec cycles, nothing sent', async () => {
    const t = await tenant('free');
    const before = emu.state.sent.length;
    const to = (phone: string, content: unknown) =>
      call(svc.url, 'POST', '/messages', {
        key: t.sandboxKey,
        body: { externalId: ext(), to: { type: 'phone', phoneE164: phone }, content },
      });
    const loc = (await to('+15551230088', { type: 'location', location: { latitude: 1, longitude: 1 } })).body
      .messageId;
    const fail = (await to('+15551230099', { type: 'contacts', contacts: [{ name: { formattedName: 'A' } }] })).body
      .messageId;
    expect((await waitStatus(t.sandboxKey, loc, ['read'])).sandbox).toBe(true);
    expect((await waitStatus(t.sandboxKey, fail, ['failed'])).error.code).toBe('SANDBOX_SIMULATED_FAILURE');
    const reaction = (await to('+15551230088', { type: 'reaction', reaction: { messageId: loc, emoji: '👍' } })).body
      .messageId;
    expect((await waitStatus(t.sandboxKey, reaction, ['read'])).status).toBe('read');
    expect(emu.state.sent.length).toBe(before);
  });

  it('broadcasts a location and an interactive message, refuses a reaction broadcast', async () => {
    const t = await tenant('basic');
    const recipients = [{ phoneE164: '+15551238001' }, { phoneE164: '+15551238002' }];
    const content = { type: 'location', location: { latitude: 51.5, longitude: -0.12, address: 'London' } };
    const res = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: { externalId: ext(), recipients, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await eventually(async () => emu.state.sent.filter((s) => s.phoneNumberId === t.phoneNumberId).length === 2);
    for (const s of emu.state.sent.filter((x) => x.phoneNumberId === t.phoneNumberId))
      expect(s.payload).toMatchObject({
        type: 'location',
        location: { latitude: '51.5', longitude: '-0.12', address: 'London' },
      });
    const reaction = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: ext(),
        recipients,
        content: { type: 'reaction', reaction: { messageId: crypto.randomUUID(), emoji: '👍' } },
      },
    });
    expect(reaction.status).toBe(400);
    expect(reaction.body.details.map((d: { path: string }) => d.path)).toContain('content.type');
  });

  it('shows which kinds each account and plan may send in capabilities', async () => {
    const free = await tenant('free');
    const pro = await tenant('pro');
    const caps = async (key: string) =>
      (await call(svc.url, 'GET', '/chat-accounts', { key })).body.accounts[0].capabilities;
    const f = await caps(free.key);
    for (const kind of ['audio', 'video', 'sticker', 'location', 'contacts', 'interactive'])
      expect(f[kind], kind).toEqual({ supported: true, enabled: true });
    expect(f.reaction).toEqual({ supported: true, enabled: true, inboundMessages: false });
    expect(f.template).toEqual({ supported: true, enabled: false });
    expect((await caps(pro.key)).replyTo).toEqual({ supported: true, enabled: true, inboundMessages: true });
  });
});
