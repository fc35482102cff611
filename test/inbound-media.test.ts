// Inbound files and read marks (issue #24, decision 0034): files users send are fetched from the
// provider (the emulator) through the real webhook, kept, served, retried after a 503, skipped
// when too large or of a type not fetched, and purged with their message; read and typing marks
// reach the provider once per message.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChatGate, type ChatGateError } from '../packages/client/src/index.js';
import { purgeOnce } from '../src/purge/purger.js';
import { type Emulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';
import { metricSum } from './support/prometheus-text.js';

const TOKEN = 'EAAG-inbound-media-token';
const MAX_BYTES = 200_000;

describe('inbound files and read marks', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({
      UNSAFE_ALLOW_PRIVATE_URLS: 'true',
      INBOUND_MEDIA_MAX_BYTES: String(MAX_BYTES),
    }));
  });
  afterAll(() => stop());

  const customer = async (plan = 'pro') => {
    const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Files', plan } });
    const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
    await emu.number(pn, { accessToken: TOKEN });
    const accountId = await createAccount(svc.url, c.body.id, {
      official: { phoneNumberId: pn, wabaId: 'w', accessToken: TOKEN },
    });
    return {
      customerId: c.body.id as string,
      pn,
      accountId,
      key: await createKey(svc.url, c.body.id, {}),
      sandboxKey: await createKey(svc.url, c.body.id, { sandbox: true }),
    };
  };

  let nextFrom = 0;
  /** A user sends a file through the emulator's real webhook; answers the inbound message's id. */
  const receive = async (
    t: { pn: string; key: string },
    type: string,
    media: Record<string, unknown>,
  ): Promise<{ id: string; from: string }> => {
    const from = `1650555${String(1000 + nextFrom++).padStart(4, '0')}`;
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.pn, from, type, media }),
    });
    expect((await res.json()).delivered).toBe(true);
    const list = await call(svc.url, 'GET', `/inbound-messages?from=%2B${from}`, { key: t.key });
    expect(list.body.inboundMessages).toHaveLength(1);
    return { id: list.body.inboundMessages[0].inboundMessageId, from };
  };
  const message = (key: string, id: string) => call(svc.url, 'GET', `/inbound-messages/${id}`, { key });
  const settled = (key: string, id: string) =>
    eventually(async () => {
      const m = await message(key, id);
      return m.body.media?.state !== 'pending' && m.body;
    });
  const fetches = (mediaId: string) => emu.state.mediaFetches.filter((f) => f.mediaId === mediaId);
  const mediaIdOf = (id: string) =>
    svc.db
      .query<{ provider_media_id: string }>(
        'SELECT provider_media_id FROM inbound_media WHERE inbound_message_id = $1',
        [id],
      )
      .then((r) => r[0]!.provider_media_id);

  it('fetches an image and a voice note through the real webhook and serves them with their type and size', async () => {
    const t = await customer();
    const jpeg = crypto.randomBytes(5000);
    const image = await receive(t, 'image', {
      dataBase64: jpeg.toString('base64'),
      mimeType: 'image/jpeg',
      caption: 'parcel',
    });
    const ogg = crypto.randomBytes(3000);
    const voice = await receive(t, 'audio', { dataBase64: ogg.toString('base64'), voice: true });

    const m = await settled(t.key, image.id);
    expect(m).toMatchObject({
      messageType: 'image',
      media: {
        state: 'fetched',
        mimeType: 'image/jpeg',
        size: 5000,
        sha256: crypto.createHash('sha256').update(jpeg).digest('hex'),
        attempts: 1,
        error: null,
      },
      readAt: null,
    });
    const res = await fetch(`${svc.url}/inbound-messages/${image.id}/media`, { headers: { 'x-api-key': t.key } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(res.headers.get('content-disposition')).toBe('inline');
    expect(res.headers.get('content-length')).toBe('5000');
    expect(Buffer.from(await res.arrayBuffer()).equals(jpeg)).toBe(true);

    expect((await settled(t.key, voice.id)).media).toMatchObject({ state: 'fetched', size: 3000 });
    const v = await fetch(`${svc.url}/inbound-messages/${voice.id}/media`, { headers: { 'x-api-key': t.key } });
    expect(v.headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    expect(Buffer.from(await v.arrayBuffer()).equals(ogg)).toBe(true);
    // The list shows the same file state; the provider was asked with the account's token, once each.
    const list = await call(svc.url, 'GET', `/inbound-messages?from=%2B${voice.from}`, { key: t.key });
    expect(list.body.inboundMessages[0].media).toMatchObject({ state: 'fetched', mimeType: 'audio/ogg; codecs=opus' });
    const steps = fetches(await mediaIdOf(voice.id)).map((f) => [f.step, f.status]);
    expect(steps).toEqual([
      ['lookup', 200],
      ['download', 200],
    ]);
    expect(
      await metricSum(svc.url, 'chatgate_inbound_media_files_total', { result: 'fetched' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('tries again after a 503 and does not lose the file; a file still pending answers 409', async () => {
    const t = await customer();
    // Refused many times: the file stays pending with its error shown, and is served once the provider recovers.
    await emu.rule({ to: 'media_download', phoneNumberId: t.pn, times: 1000, httpStatus: 503 });
    const data = crypto.randomBytes(2000);
    const doc = await receive(t, 'document', { dataBase64: data.toString('base64'), filename: 'invoice.pdf' });
    const pending = await eventually(async () => {
      const m = await message(t.key, doc.id);
      return m.body.media?.attempts >= 2 && m.body;
    });
    expect(pending.media).toMatchObject({ state: 'pending', filename: 'invoice.pdf' });
    expect(pending.media.error).toMatch(/503/);
    const early = await call(svc.url, 'GET', `/inbound-messages/${doc.id}/media`, { key: t.key });
    expect(early).toMatchObject({ status: 409, body: { error: 'media_not_ready', state: 'pending' } });
    expect(early.headers.get('retry-after')).toBe('5');
    await emu.clearRules();
    const m = await settled(t.key, doc.id);
    expect(m.media).toMatchObject({ state: 'fetched', size: 2000, error: null });
    const statuses = fetches(await mediaIdOf(doc.id)).map((f) => f.status);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(2);
    expect(statuses.slice(-2)).toEqual([200, 200]);
    const res = await fetch(`${svc.url}/inbound-messages/${doc.id}/media`, { headers: { 'x-api-key': t.key } });
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    // Answered as the portal answers it (http/inbound-file-reply.ts): a document is a download, never shown in place.
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="invoice.pdf"; filename*=UTF-8''invoice.pdf`,
    );
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
  });

  it('fails a file the provider refuses for good, and one whose media id is about to expire', async () => {
    const t = await customer();
    await emu.rule({ to: 'media_download', phoneNumberId: t.pn, times: 1, httpStatus: 400, error: { code: 100 } });
    const gone = await receive(t, 'image', { size: 100 });
    expect((await settled(t.key, gone.id)).media).toMatchObject({ state: 'failed', attempts: 1 });
    expect(await call(svc.url, 'GET', `/inbound-messages/${gone.id}/media`, { key: t.key })).toMatchObject({
      status: 410,
      body: { error: 'media_unavailable', state: 'failed' },
    });

    // Refused with 503 until the media id's expiry is near: given up before it, not tried after.
    await emu.rule({ to: 'media_download', phoneNumberId: t.pn, times: 1000, httpStatus: 503 });
    const late = await receive(t, 'image', { size: 100 });
    await eventually(async () => (await message(t.key, late.id)).body.media?.attempts >= 1);
    await svc.db.query(`UPDATE inbound_media SET give_up_at = now() WHERE inbound_message_id = $1`, [late.id]);
    const m = await settled(t.key, late.id);
    expect(m.media.state).toBe('failed');
    expect(m.media.error).toMatch(/^gave up after \d+ attempts: media lookup: /);
    await emu.clearRules();
  });

  it('tries again when the download does not match the SHA-256 the webhook announced', async () => {
    const t = await customer();
    const bad = await receive(t, 'image', { size: 100, sha256: 'b'.repeat(64) });
    const m = await eventually(async () => {
      const r = await message(t.key, bad.id);
      return r.body.media?.attempts >= 2 && r.body;
    });
    expect(m.media).toMatchObject({ state: 'pending', error: 'download: the file does not match its SHA-256' });
    expect(
      await svc.db.query(
        'SELECT 1 FROM media_blobs b JOIN inbound_media f ON f.id = b.media_id WHERE f.inbound_message_id = $1',
        [bad.id],
      ),
    ).toEqual([]);
  });

  it('records a file over the size limit, or of a type not fetched, without downloading it', async () => {
    const t = await customer();
    const big = await receive(t, 'video', { size: MAX_BYTES + 1 });
    expect((await settled(t.key, big.id)).media).toMatchObject({
      state: 'skipped_too_large',
      size: MAX_BYTES + 1,
      mimeType: 'video/mp4',
    });
    // Asked what the file is; never downloaded.
    expect(fetches(await mediaIdOf(big.id)).map((f) => f.step)).toEqual(['lookup']);
    expect(await call(svc.url, 'GET', `/inbound-messages/${big.id}/media`, { key: t.key })).toMatchObject({
      status: 410,
      body: { error: 'media_unavailable', state: 'skipped_too_large' },
    });

    const zip = await receive(t, 'document', { size: 100, mimeType: 'application/zip' });
    const m = await settled(t.key, zip.id);
    expect(m.media).toMatchObject({ state: 'skipped_type', mimeType: 'application/zip' });
    expect(m.media.error).toMatch(/INBOUND_MEDIA_TYPES/);
    expect(fetches(await mediaIdOf(zip.id))).toEqual([]);

    // A message without a file has none.
    const text = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.pn, from: '16505559999', text: 'hi' }),
    });
    expect((await text.json()).delivered).toBe(true);
    const list = await call(svc.url, 'GET', '/inbound-messages?from=%2B16505559999', { key: t.key });
    const id = list.body.inboundMessages[0].inboundMessageId;
    expect(list.body.inboundMessages[0].media).toBeNull();
    expect(await call(svc.url, 'GET', `/inbound-messages/${id}/media`, { key: t.key })).toMatchObject({
      status: 404,
      body: { error: 'inbound_media_not_found' },
    });
  });

  it('purges the file with its message under the plan retention', async () => {
    const t = await customer();
    const img = await receive(t, 'image', { size: 1000 });
    await settled(t.key, img.id);
    const [row] = await svc.db.query<{ id: string }>('SELECT id FROM inbound_media WHERE inbound_message_id = $1', [
      img.id,
    ]);
    const blobs = () =>
      svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM media_blobs WHERE media_id = $1', [row!.id]);
    expect((await blobs())[0]!.n).toBe(1);
    // Not yet past retention: kept.
    await purgeOnce(svc.db, 3600, true);
    expect((await message(t.key, img.id)).status).toBe(200);
    await svc.db.query(`UPDATE inbound_messages SET expires_at = now() - interval '1 second' WHERE id = $1`, [img.id]);
    await purgeOnce(svc.db, 3600, true);
    expect((await message(t.key, img.id)).status).toBe(404);
    expect((await blobs())[0]!.n).toBe(0);
    expect(await svc.db.query('SELECT 1 FROM inbound_media WHERE id = $1', [row!.id])).toEqual([]);
    expect(await call(svc.url, 'GET', `/inbound-messages/${img.id}/media`, { key: t.key })).toMatchObject({
      status: 404,
      body: { error: 'inbound_message_not_found' },
    });
  });

  it('answers 404 to another customer, a key scoped to another account and a sandbox key', async () => {
    const t = await customer();
    const img = await receive(t, 'image', { size: 500 });
    await settled(t.key, img.id);
    const other = await customer();
    const otherAccount = await createAccount(svc.url, t.customerId, {
      official: { phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`, wabaId: 'w', accessToken: TOKEN },
    });
    const scoped = await createKey(svc.url, t.customerId, { chatAccountId: otherAccount });
    for (const key of [other.key, scoped]) {
      for (const [method, path] of [
        ['GET', `/inbound-messages/${img.id}`],
        ['GET', `/inbound-messages/${img.id}/media`],
        ['POST', `/inbound-messages/${img.id}/read`],
      ] as const)
        expect(await call(svc.url, method, path, { key }), `${method} ${path}`).toMatchObject({
          status: 404,
          body: { error: 'inbound_message_not_found' },
        });
    }
    expect(await call(svc.url, 'GET', `/inbound-messages/${img.id}/media`, { key: t.sandboxKey })).toMatchObject({
      status: 404,
    });
    // A sandbox key's read mark: 404 for an id that is not its customer's (issue #32: it answered 200 for any id).
    for (const path of [`/inbound-messages/${img.id}/read`, `/inbound-messages/${crypto.randomUUID()}/read`])
      expect(await call(svc.url, 'POST', path, { key: other.sandboxKey }), path).toMatchObject({
        status: 404,
        body: { error: 'inbound_message_not_found' },
      });
    const scopedSandbox = await createKey(svc.url, t.customerId, { sandbox: true, chatAccountId: otherAccount });
    expect(await call(svc.url, 'POST', `/inbound-messages/${img.id}/read`, { key: scopedSandbox })).toMatchObject({
      status: 404,
      body: { error: 'inbound_message_not_found' },
    });
    const starter = await customer('starter');
    expect(await call(svc.url, 'GET', `/inbound-messages/${img.id}`, { key: starter.key })).toMatchObject({
      status: 403,
      body: { error: 'feature_not_available' },
    });
    expect(await svc.db.query('SELECT read_at FROM inbound_messages WHERE id = $1', [img.id])).toEqual([
      { read_at: null },
    ]);
  });

  it('marks a message read with the typing indicator once; a repeat calls the provider no more', async () => {
    const t = await customer();
    const img = await receive(t, 'image', { size: 300 });
    const wamid = (
      await svc.db.query<{ provider_message_id: string }>(
        'SELECT provider_message_id FROM inbound_messages WHERE id = $1',
        [img.id],
      )
    )[0]!.provider_message_id;
    const reads = () => emu.state.reads.filter((r) => r.messageId === wamid);

    const first = await call(svc.url, 'POST', `/inbound-messages/${img.id}/read`, {
      key: t.key,
      body: { typing: true },
    });
    expect(first).toMatchObject({ status: 200, body: { inboundMessageId: img.id, typing: true } });
    expect(reads()).toEqual([{ phoneNumberId: t.pn, messageId: wamid, typing: true, at: expect.any(Number) }]);
    const again = await call(svc.url, 'POST', `/inbound-messages/${img.id}/read`, { key: t.key });
    expect(again.body).toEqual(first.body);
    expect(reads()).toHaveLength(1);
    expect((await message(t.key, img.id)).body.readAt).toBe(first.body.readAt);
    // It took a slot of the account's pacing (no send went through this account).
    expect(await svc.db.query('SELECT 1 FROM account_pacing WHERE account_id = $1', [t.accountId])).toHaveLength(1);

    // Without a body: read only. A provider refusal records nothing, and the next call tries again.
    const plain = await receive(t, 'sticker', { size: 100 });
    await emu.rule({ to: 'read', phoneNumberId: t.pn, times: 1, httpStatus: 500 });
    const refused = await call(svc.url, 'POST', `/inbound-messages/${plain.id}/read`, { key: t.key });
    expect(refused).toMatchObject({ status: 503, body: { error: 'provider_unavailable' } });
    expect((await message(t.key, plain.id)).body.readAt).toBeNull();
    const ok = await call(svc.url, 'POST', `/inbound-messages/${plain.id}/read`, { key: t.key });
    expect(ok).toMatchObject({ status: 200, body: { typing: false } });
    expect(emu.state.reads.filter((r) => r.phoneNumberId === t.pn)).toHaveLength(2);
    expect(emu.state.reads.at(-1)!.typing).toBe(false);

    // A sandbox key is answered without the provider.
    const sandbox = await call(svc.url, 'POST', `/inbound-messages/${img.id}/read`, {
      key: t.sandboxKey,
      body: { typing: true },
    });
    expect(sandbox).toMatchObject({ status: 200, body: { sandbox: true, typing: true } });
    expect(emu.state.reads.filter((r) => r.phoneNumberId === t.pn)).toHaveLength(2);
    expect(await metricSum(svc.url, 'chatgate_inbound_read_marks_total', { result: 'already' })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('@chatgate/client reads the message, downloads its file and marks it read', async () => {
    const t = await customer();
    const client = new ChatGate({ apiKey: t.key, baseUrl: svc.url, retryDelayMs: 10 });
    const data = crypto.randomBytes(700);
    const photo = await receive(t, 'image', { dataBase64: data.toString('base64'), mimeType: 'image/png' });
    await settled(t.key, photo.id);
    expect((await client.getInboundMessage(photo.id)).media).toMatchObject({ state: 'fetched', mimeType: 'image/png' });
    const file = await client.getInboundMedia(photo.id);
    expect(file.contentType).toBe('image/png');
    expect(Buffer.from(file.data).equals(data)).toBe(true);
    expect(await client.markInboundRead(photo.id, { typing: true })).toMatchObject({ typing: true });
    const other = new ChatGate({ apiKey: (await customer()).key, baseUrl: svc.url, retryDelayMs: 10 });
    const err = await other.getInboundMedia(photo.id).then(
      () => expect.fail('served to another customer'),
      (e: unknown) => e as ChatGateError,
    );
    expect(err).toMatchObject({ status: 404, error: 'inbound_message_not_found' });
  });
});
