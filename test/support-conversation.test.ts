// Issue #24, "Done when", as one conversation through the real API and pipeline (the provider
// emulator's signed webhook in, its Cloud API out): a customer receives a voice note and a photo,
// reads them and their files, marks them read with the typing indicator, answers with a list,
// receives the list reply linked to our message, reacts to the customer's photo and replies to
// the voice note; the portal shows the same conversation with the note playable and the photo as
// a thumbnail. Each step is asserted where it lands: the API's answers and the emulator's records.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, startLiveService } from './support/emulator.js';
import { call, eventually, type Service } from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const CUSTOMER = '16505559001';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

type Inbound = {
  inboundMessageId: string;
  messageType: string;
  media: { kind: string; voice?: boolean; caption?: string | null; state: string; size: number; mimeType: string };
  interactive: { type: string; id: string; title: string } | null;
  replyTo: { messageId: string | null; externalId: string | null; providerMessageId: string } | null;
  readAt: string | null;
};

describe('a support conversation, end to end (issue #24, done when)', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let t: OfficialCustomer;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    t = await officialCustomer(svc.url, emu, { plan: 'pro' });
    await createPortalUser(svc.url, t.customerId, 'agent@support.example', 'viewer');
  });
  afterAll(() => stop());

  /** The customer's phone posts a message through the emulator's signed webhook; its wamid. */
  async function customerSends(body: Record<string, unknown>): Promise<string> {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], from: CUSTOMER, name: 'Ana', ...body }),
    });
    const out = (await res.json()) as { delivered: boolean; id: string };
    expect(out.delivered).toBe(true);
    return out.id;
  }
  const inbox = async () =>
    (await call(svc.url, 'GET', `/inbound-messages?from=%2B${CUSTOMER}`, { key: t.key })).body
      .inboundMessages as Inbound[];
  const send = async (externalId: string, content: unknown, extra: Record<string, unknown> = {}) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId,
        chatAccountId: t.accountIds[0],
        to: { type: 'phone', phoneE164: `+${CUSTOMER}` },
        content,
        ...extra,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.messageId as string;
    const m = await eventually(async () => {
      const got = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      return ['sent', 'delivered', 'failed'].includes(got.status) && got;
    });
    expect(m.status, JSON.stringify(m.error)).not.toBe('failed');
    const sent = emu.state.sent.filter((s) => s.messageId === id);
    expect(sent).toHaveLength(1);
    return { id, providerMessageId: m.providerMessageId as string, payload: sent[0]!.payload };
  };
  const envelope = (id: string) => ({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: CUSTOMER,
    biz_opaque_callback_data: id,
  });

  it('receives, reads, marks read, answers with a list, gets the reply, reacts and replies', async () => {
    // 1. The customer sends a voice note and a photo of the broken parcel.
    const ogg = Buffer.concat([Buffer.from('OggS'), crypto.randomBytes(1500)]);
    const voiceWamid = await customerSends({
      type: 'audio',
      media: { dataBase64: ogg.toString('base64'), voice: true },
    });
    const photoWamid = await customerSends({
      type: 'image',
      media: { dataBase64: PNG.toString('base64'), mimeType: 'image/png', caption: 'the box' },
    });

    // 2. Read them: both listed with their content, their files fetched and served.
    const received = await eventually(async () => {
      const list = await inbox();
      return list.length === 2 && list.every((m) => m.media.state === 'fetched') && list;
    });
    const voice = received.find((m) => m.messageType === 'voice_note');
    const photo = received.find((m) => m.messageType === 'image');
    expect(voice).toMatchObject({
      messageType: 'voice_note',
      media: { kind: 'audio', voice: true, state: 'fetched', size: ogg.length, mimeType: 'audio/ogg; codecs=opus' },
      readAt: null,
    });
    expect(photo).toMatchObject({
      messageType: 'image',
      media: { kind: 'image', caption: 'the box', state: 'fetched', size: PNG.length, mimeType: 'image/png' },
    });
    for (const [m, bytes, type] of [
      [voice!, ogg, 'audio/ogg; codecs=opus'],
      [photo!, PNG, 'image/png'],
    ] as const) {
      const one = await call(svc.url, 'GET', `/inbound-messages/${m.inboundMessageId}`, { key: t.key });
      expect(one.body).toMatchObject({ inboundMessageId: m.inboundMessageId, media: { state: 'fetched' } });
      const file = await fetch(`${svc.url}/inbound-messages/${m.inboundMessageId}/media`, {
        headers: { 'x-api-key': t.key },
      });
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
    }

    // 3. Mark them read, the latest with the typing indicator: one provider call each, a repeat none.
    const markRead = (id: string, typing: boolean) =>
      call(svc.url, 'POST', `/inbound-messages/${id}/read`, { key: t.key, body: { typing } });
    expect((await markRead(voice!.inboundMessageId, false)).status).toBe(200);
    const marked = await markRead(photo!.inboundMessageId, true);
    expect(marked).toMatchObject({ status: 200, body: { inboundMessageId: photo!.inboundMessageId, typing: true } });
    expect((await markRead(photo!.inboundMessageId, true)).status).toBe(200);
    const reads = emu.state.reads.filter((r) => r.phoneNumberId === t.phoneNumberIds[0]);
    expect(reads.map((r) => [r.messageId, r.typing])).toEqual([
      [voiceWamid, false],
      [photoWamid, true],
    ]);
    for (const m of [voice!, photo!])
      expect(
        (await call(svc.url, 'GET', `/inbound-messages/${m.inboundMessageId}`, { key: t.key })).body.readAt,
      ).toEqual(expect.any(String));

    // 4. Answer with a list: the provider receives exactly the list payload.
    const list = await send('support-list', {
      type: 'interactive',
      interactive: {
        type: 'list',
        header: { type: 'text', text: 'Your parcel' },
        body: { text: 'Sorry about that. What would you like?' },
        footer: { text: 'Support' },
        list: {
          button: 'Options',
          sections: [
            {
              title: 'Solutions',
              rows: [
                { id: 'refund', title: 'Refund', description: 'Money back in 3 days' },
                { id: 'replace', title: 'Replacement' },
              ],
            },
          ],
        },
      },
    });
    expect(list.payload).toEqual({
      ...envelope(list.id),
      type: 'interactive',
      interactive: {
        type: 'list',
        header: { type: 'text', text: 'Your parcel' },
        body: { text: 'Sorry about that. What would you like?' },
        footer: { text: 'Support' },
        action: {
          button: 'Options',
          sections: [
            {
              title: 'Solutions',
              rows: [
                { id: 'refund', title: 'Refund', description: 'Money back in 3 days' },
                { id: 'replace', title: 'Replacement' },
              ],
            },
          ],
        },
      },
    });

    // 5. The customer picks a row: the list reply, linked to our list message.
    await customerSends({
      message: {
        type: 'interactive',
        interactive: { type: 'list_reply', list_reply: { id: 'replace', title: 'Replacement' } },
      },
      contextId: list.providerMessageId,
    });
    const choice = await eventually(async () => (await inbox()).find((m) => m.messageType === 'interactive'));
    expect(choice).toMatchObject({
      interactive: { type: 'list_reply', id: 'replace', title: 'Replacement' },
      replyTo: { messageId: list.id, externalId: 'support-list', providerMessageId: list.providerMessageId },
    });

    // 6. React to the customer's photo: the provider gets the reaction on the photo's wamid.
    const reaction = await send('support-reaction', {
      type: 'reaction',
      reaction: { inboundMessageId: photo!.inboundMessageId, emoji: '🙏' },
    });
    expect(reaction.payload).toEqual({
      ...envelope(reaction.id),
      type: 'reaction',
      reaction: { message_id: photoWamid, emoji: '🙏' },
    });

    // 7. Reply to the voice note specifically: the provider gets it as a reply (context).
    const reply = await send(
      'support-reply',
      { type: 'text', text: 'A replacement is on its way.' },
      { replyTo: { inboundMessageId: voice!.inboundMessageId } },
    );
    expect(reply.payload).toEqual({
      ...envelope(reply.id),
      type: 'text',
      text: { body: 'A replacement is on its way.', preview_url: false },
      context: { message_id: voiceWamid },
    });

    // The portal shows the same conversation: the note playable, the photo a thumbnail, the choice.
    const portal = new PortalClient(svc.url);
    await portal.login('agent@support.example');
    const page = await portal.get(`/portal/conversations/${t.accountIds[0]}/%2B${CUSTOMER}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(
      `<audio controls preload="metadata" src="/portal/inbox/${voice!.inboundMessageId}/media">`,
    );
    expect(page.text).toMatch(
      new RegExp(`<img class="thumb" alt="the box" src="/portal/inbox/${photo!.inboundMessageId}/media"`),
    );
    expect(page.text).toContain('chose from a list</strong> “Replacement”');
    const thumb = await portal.get(`/portal/inbox/${photo!.inboundMessageId}/media`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/png');
  });
});
