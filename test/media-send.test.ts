// Image and document sends through the provider emulator: uploads sent by provider media id,
// media URLs fetched from a real file server on loopback, and the media file lifecycle.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { insertBatch } from '../src/messages/insert-batch.js';
import { APP_SECRET, type Emulator, providerEnv, startEmulator, startLiveService } from './support/emulator.js';
import { type FileServer, startFileServer } from './support/file-server.js';
import {
  call,
  createAccount,
  createKey,
  createTestDatabase,
  eventually,
  type Service,
  startService,
} from './support/harness.js';
import { JPEG_BYTES, PDF_BYTES, upload } from './support/media-files.js';

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe('media sends through the provider emulator', () => {
  let emu: Emulator;
  let files: FileServer;
  let svc: Service;
  let n = 0;
  const ext = () => `media-${n++}`;

  let stop: () => Promise<void>;

  beforeAll(async () => {
    files = await startFileServer();
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
  });
  afterAll(async () => {
    await stop();
    await files.close();
  });
  beforeEach(() => emu.clearRules());

  const tenant = async (s: Service = svc) => {
    const customer = await call(s.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Media', plan: 'basic' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(s.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-media-token' },
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      key: await createKey(s.url, customer.body.id, {}),
    };
  };
  const send = async (key: string, content: Record<string, unknown>, s: Service = svc) => {
    const res = await call(s.url, 'POST', '/messages', {
      key,
      body: { externalId: ext(), to: { type: 'phone', phoneE164: '+15551239001' }, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.messageId as string;
  };
  const waitFinal = (key: string, id: string, s: Service = svc) =>
    eventually(async () => {
      const m = (await call(s.url, 'GET', `/messages/${id}`, { key })).body;
      return ['sent', 'delivered', 'read', 'failed'].includes(m.status) ? m : undefined;
    });
  const payloadOf = (id: string) =>
    emu.state.sent.find((s) => s.messageId === id)?.payload as Record<string, any> | undefined;
  const uploadsTo = (phoneNumberId: string) =>
    [...emu.state.media.entries()].filter(([, m]) => m.phoneNumberId === phoneNumberId);
  const mediaRow = (id: string) => svc.db.query('SELECT 1 FROM media_files WHERE id = $1', [id]);
  /** Broadcasts `content` to `n` numbers starting with `prefix`; resolves with the record once nothing waits. */
  const broadcastToEnd = async (key: string, n: number, prefix: string, content: Record<string, unknown>) => {
    const recipients = Array.from({ length: n }, (_, i) => ({ phoneE164: `${prefix}${String(i).padStart(4, '0')}` }));
    const res = await call(svc.url, 'POST', '/messages/broadcast', {
      key,
      body: { externalId: ext(), recipients, content },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return eventually(async () => {
      const b = (await call(svc.url, 'GET', `/broadcasts/${res.body.broadcastId}`, { key })).body;
      return b.counts.pending + b.counts.queued === 0 ? b : undefined;
    }, 30_000);
  };

  it('sends an uploaded image by provider media id with its caption, then deletes the upload', async () => {
    const t = await tenant();
    const mediaId = (await upload(svc.url, t.key, JPEG_BYTES, 'photo.jpg', 'image/jpeg')).body.mediaId;
    const id = await send(t.key, { type: 'image', image: { mediaId }, caption: 'Your receipt' });
    const m = await waitFinal(t.key, id);
    expect(m).toMatchObject({ status: expect.stringMatching(/sent|delivered/), error: null, attemptCount: 1 });
    const [providerId, file] = uploadsTo(t.phoneNumberId)[0]!;
    expect(file).toMatchObject({ mimeType: 'image/jpeg', sha256: sha(JPEG_BYTES), filename: 'photo.jpg' });
    expect(payloadOf(id)).toMatchObject({ type: 'image', image: { id: providerId, caption: 'Your receipt' } });
    expect(payloadOf(id)!.image.link).toBeUndefined();
    // Every message using it left the queue: the file is gone, and a new send cannot use it.
    await eventually(async () => (await mediaRow(mediaId)).length === 0);
    const again = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: ext(),
        to: { type: 'phone', phoneE164: '+15551239001' },
        content: { type: 'image', image: { mediaId } },
      },
    });
    expect(again.body).toEqual({ error: 'invalid_media', code: 'media_not_found' });
  });

  it('answers a repeat of a media send after its file was deleted as a repeat (200), or a conflict (409)', async () => {
    const t = await tenant();
    const mediaId = (await upload(svc.url, t.key, JPEG_BYTES, 'photo.jpg')).body.mediaId;
    const body = {
      externalId: ext(),
      to: { type: 'phone', phoneE164: '+15551239001' },
      content: { type: 'image', image: { mediaId } },
    };
    const first = await call(svc.url, 'POST', '/messages', { key: t.key, body });
    expect(first.status).toBe(201);
    await waitFinal(t.key, first.body.messageId);
    await eventually(async () => (await mediaRow(mediaId)).length === 0);
    const repeat = await call(svc.url, 'POST', '/messages', { key: t.key, body });
    expect(repeat.status).toBe(200);
    expect(repeat.body.messageId).toBe(first.body.messageId);
    const changed = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { ...body, content: { ...body.content, caption: 'other' } },
    });
    expect(changed.body).toMatchObject({ error: 'conflict' });
  });

  it('leaves out of the insert a message whose upload was deleted after it was checked', async () => {
    const t = await tenant();
    const now = new Date();
    const [outcome] = await insertBatch(svc.db, [
      {
        id: crypto.randomUUID(),
        customerId: t.customerId,
        chatAccountId: t.accountId,
        apiKeyId: (
          await svc.db.query<{ id: string }>('SELECT id FROM api_keys WHERE customer_id = $1', [t.customerId])
        )[0]!.id,
        externalId: ext(),
        payloadHash: 'h',
        recipient: '+15551239001',
        channel: 'chat_official',
        contentJson: '{"type":"image","image":{"mediaId":"x"}}',
        metadataJson: null,
        sandbox: false,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 86400_000),
        maxAttempts: 5,
        mediaId: crypto.randomUUID(),
        quotaLimit: 20000,
      },
    ]);
    expect(outcome).toEqual({ kind: 'media_gone' });
    expect(await svc.db.query('SELECT 1 FROM messages WHERE customer_id = $1', [t.customerId])).toHaveLength(0);
    const [quota] = await svc.db.query<{ used: number }>('SELECT used FROM quota_usage WHERE customer_id = $1', [
      t.customerId,
    ]);
    expect(Number(quota?.used ?? 0)).toBe(0);
  });

  it('deletes the upload when a receipt takes its message out of the queue', async () => {
    // No worker here: the message stays pending until the receipt of a send whose answer was lost.
    const database = await createTestDatabase();
    const api = await startService({ env: providerEnv(emu), role: 'api', database });
    try {
      const t = await tenant(api);
      const mediaId = (await upload(api.url, t.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
      const id = await send(t.key, { type: 'image', image: { mediaId } }, api);
      const raw = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'w1',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550000000', phone_number_id: t.phoneNumberId },
                  statuses: [
                    {
                      id: 'wamid.lost-answer',
                      status: 'sent',
                      timestamp: String(Math.floor(Date.now() / 1000)),
                      recipient_id: '15551239001',
                      biz_opaque_callback_data: id,
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
      const signature = `sha256=${crypto.createHmac('sha256', APP_SECRET).update(raw).digest('hex')}`;
      const posted = await fetch(`${api.url}/provider/webhooks/app`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
        body: raw,
      });
      expect(posted.status).toBe(200);
      await eventually(
        async () => (await call(api.url, 'GET', `/messages/${id}`, { key: t.key })).body.status === 'sent',
      );
      expect(await database.db.query('SELECT 1 FROM media_files WHERE id = $1', [mediaId])).toHaveLength(0);
    } finally {
      await api.stop();
      await database.drop();
    }
  });

  it('broadcasts an upload: every message of the broadcast sends the one provider upload, then the file goes', async () => {
    const t = await tenant();
    const mediaId = (await upload(svc.url, t.key, PDF_BYTES, 'menu.pdf')).body.mediaId;
    const done = await broadcastToEnd(t.key, 20, '+1555124', { type: 'document', document: { mediaId } });
    expect(done.counts.failed).toBe(0);
    const uploads = uploadsTo(t.phoneNumberId);
    expect(uploads).toHaveLength(1);
    const sent = emu.state.sent.filter((x) => x.phoneNumberId === t.phoneNumberId);
    expect(sent).toHaveLength(20);
    for (const x of sent) expect((x.payload as any).document).toEqual({ id: uploads[0]![0], filename: 'menu.pdf' });
    await eventually(async () => (await mediaRow(mediaId)).length === 0);
  });

  it("fetches a broadcast's URL once per number, not once per message", async () => {
    const t = await tenant();
    files.put('/flyer.png', {
      body: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2048, 1)]),
      headers: { 'content-type': 'image/png' },
    });
    const done = await broadcastToEnd(t.key, 12, '+1555125', {
      type: 'image',
      image: { url: `${files.url}/flyer.png` },
    });
    expect(done.counts.failed).toBe(0);
    expect(files.hitsOf('/flyer.png')).toBe(1);
    expect(uploadsTo(t.phoneNumberId)).toHaveLength(1);
    expect(emu.state.sent.filter((x) => x.phoneNumberId === t.phoneNumberId)).toHaveLength(12);
  });

  it('keeps the upload while another message using it is still queued (its send unanswered), and deletes it after the last', async () => {
    const t = await tenant();
    const mediaId = (await upload(svc.url, t.key, PDF_BYTES, 'kept.pdf')).body.mediaId;
    // The second recipient's first send hangs until the client gives up: the provider timeout, a
    // generous 10 s, orders it after the first message's end however slow this machine is.
    await emu.rule({ to: '15551239002', hang: true, times: 1 });
    const first = await send(t.key, { type: 'document', document: { mediaId } });
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: ext(),
        to: { type: 'phone', phoneE164: '+15551239002' },
        content: { type: 'document', document: { mediaId } },
      },
    });
    const second = res.body.messageId as string;
    // The hang has taken the second's first attempt: from here until the timeout it is in flight.
    // (Generous: under a loaded CI the upload and the first attempt took over 15 s to begin.)
    await eventually(async () => emu.state.rules.some((r) => r.to === '15551239002' && r.times === 0), 40_000);
    expect((await waitFinal(t.key, first)).status).toMatch(/sent|delivered/);
    const waiting = (await call(svc.url, 'GET', `/messages/${second}`, { key: t.key })).body;
    expect(waiting.status).toBe('queued');
    expect(emu.state.sent.filter((x) => x.messageId === second)).toHaveLength(0); // still in its hung attempt
    expect(await mediaRow(mediaId)).toHaveLength(1);
    const done = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${second}`, { key: t.key })).body;
      return ['sent', 'delivered', 'read', 'failed'].includes(m.status) ? m : undefined;
    }, 40_000);
    // Its hung send may have reached the provider: not sent again, failed once its wait for a
    // receipt ends (decision 0061); the upload goes with it.
    expect(done).toMatchObject({ status: 'failed', attemptCount: 1, lastErrorCode: 'PROVIDER_TIMEOUT' });
    await eventually(async () => (await mediaRow(mediaId)).length === 0);
  });

  it('fetches an image URL itself, checks it, uploads it and sends it by provider id', async () => {
    const t = await tenant();
    files.put('/img/photo.jpg', { body: JPEG_BYTES, headers: { 'content-type': 'image/jpeg' } });
    const id = await send(t.key, { type: 'image', image: { url: `${files.url}/img/photo.jpg` } });
    expect((await waitFinal(t.key, id)).status).toMatch(/sent|delivered/);
    const [providerId, file] = uploadsTo(t.phoneNumberId)[0]!;
    expect(file).toMatchObject({ sha256: sha(JPEG_BYTES), mimeType: 'image/jpeg' });
    expect(payloadOf(id)!.image).toEqual({ id: providerId });
  });

  it('follows up to 3 redirects; a document keeps the last segment of its URL as file name', async () => {
    const t = await tenant();
    files.put('/r1/invoice-77.pdf', { location: '/r2' });
    files.put('/r2', { location: `${files.url}/r3` });
    files.put('/r3', { status: 307, location: '/files/final' });
    files.put('/files/final', { body: PDF_BYTES, headers: { 'content-type': 'application/octet-stream' } });
    const id = await send(t.key, { type: 'document', document: { url: `${files.url}/r1/invoice-77.pdf` } });
    expect((await waitFinal(t.key, id)).status).toMatch(/sent|delivered/);
    expect(payloadOf(id)!.document).toMatchObject({ filename: 'invoice-77.pdf' });
    expect(uploadsTo(t.phoneNumberId)[0]![1].mimeType).toBe('application/pdf');

    files.put('/h0', { location: '/h1' });
    files.put('/h1', { location: '/h2' });
    files.put('/h2', { location: '/h3' });
    files.put('/h3', { location: '/files/final' });
    const tooMany = await waitFinal(
      t.key,
      await send(t.key, { type: 'document', document: { url: `${files.url}/h0` } }),
    );
    expect(tooMany).toMatchObject({
      status: 'failed',
      lastErrorCode: 'MEDIA_UNAVAILABLE',
      error: { code: 'MEDIA_UNAVAILABLE', message: expect.stringContaining('redirects') },
    });
    expect(files.hitsOf('/files/final')).toBe(1);
  });

  it('fails with MEDIA_UNAVAILABLE, without retrying, on 404, oversize, wrong format and a redirect off the web', async () => {
    const t = await tenant();
    files.put('/big.png', {
      body: Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        Buffer.alloc(5 * 1024 * 1024),
      ]),
      headers: { 'content-type': 'image/png' },
    });
    files.put('/page.jpg', { body: '<html>not an image</html>', headers: { 'content-type': 'image/jpeg' } });
    files.put('/archive.pdf', {
      body: Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(64)]),
      headers: { 'content-type': 'application/pdf' },
    });
    files.put('/escape', { location: 'file:///etc/passwd' });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ type: 'image', image: { url: `${files.url}/missing.jpg` } }, '/missing.jpg', /HTTP 404/],
      [{ type: 'image', image: { url: `${files.url}/big.png` } }, '/big.png', /larger than/],
      [{ type: 'image', image: { url: `${files.url}/page.jpg` } }, '/page.jpg', /JPEG or PNG/],
      [{ type: 'document', document: { url: `${files.url}/archive.pdf` } }, '/archive.pdf', /PDF, Word/],
      [{ type: 'document', document: { url: `${files.url}/escape` } }, '/escape', /refused/],
    ];
    const ids = await Promise.all(cases.map(([content]) => send(t.key, content)));
    for (const [i, [, path, reason]] of cases.entries()) {
      const m = await waitFinal(t.key, ids[i]!);
      expect(m, path).toMatchObject({
        status: 'failed',
        attemptCount: 0,
        lastErrorCode: 'MEDIA_UNAVAILABLE',
        error: { code: 'MEDIA_UNAVAILABLE', message: expect.stringMatching(reason) },
      });
      expect(files.hitsOf(path), path).toBe(1);
      expect(payloadOf(ids[i]!)).toBeUndefined();
    }
    const events = await svc.db.query<{ data: any }>(
      `SELECT data FROM events WHERE type = 'message.status' AND data->>'messageId' = $1`,
      [ids[0]],
    );
    expect(events.map((e) => e.data)).toEqual([
      expect.objectContaining({ status: 'failed', error: expect.objectContaining({ code: 'MEDIA_UNAVAILABLE' }) }),
    ]);
    expect(uploadsTo(t.phoneNumberId)).toHaveLength(0);
  });

  it('retries a URL that answers 503, and a provider upload that fails transiently', async () => {
    const t = await tenant();
    files.put('/flaky.jpg', [{ status: 503 }, { body: JPEG_BYTES, headers: { 'content-type': 'image/jpeg' } }]);
    const flaky = await waitFinal(
      t.key,
      await send(t.key, { type: 'image', image: { url: `${files.url}/flaky.jpg` } }),
    );
    expect(flaky).toMatchObject({ status: expect.stringMatching(/sent|delivered/), attemptCount: 2 });
    expect(files.hitsOf('/flaky.jpg')).toBe(2);

    await emu.rule({ to: 'media', phoneNumberId: t.phoneNumberId, httpStatus: 500, times: 1 });
    const mediaId = (await upload(svc.url, t.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    const retried = await waitFinal(t.key, await send(t.key, { type: 'image', image: { mediaId } }));
    expect(retried).toMatchObject({ status: expect.stringMatching(/sent|delivered/), attemptCount: 2 });
  });

  it('fails with MEDIA_UNAVAILABLE when the provider refuses the file (131053)', async () => {
    const t = await tenant();
    await emu.rule({
      to: 'media',
      phoneNumberId: t.phoneNumberId,
      error: { code: 131053, message: 'Media upload error' },
    });
    const mediaId = (await upload(svc.url, t.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    const m = await waitFinal(t.key, await send(t.key, { type: 'image', image: { mediaId } }));
    expect(m).toMatchObject({
      status: 'failed',
      lastErrorCode: 'MEDIA_UNAVAILABLE',
      error: { provider: { code: 131053 } },
    });
    await eventually(async () => (await mediaRow(mediaId)).length === 0);
  });

  it('fails a message whose upload was deleted between queueing and sending', async () => {
    const database = await createTestDatabase();
    const env = { ...providerEnv(emu), WORKER_POLL_MS: '50' };
    const api = await startService({ env, role: 'api', database });
    const t = await tenant(api);
    const mediaId = (await upload(api.url, t.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    const id = await send(t.key, { type: 'image', image: { mediaId } }, api);
    await database.db.query('DELETE FROM media_files WHERE id = $1', [mediaId]);
    const worker = await startService({ env, role: 'worker', database });
    try {
      const m = await waitFinal(t.key, id, api);
      expect(m).toMatchObject({
        status: 'failed',
        attemptCount: 0,
        error: { code: 'MEDIA_UNAVAILABLE', message: expect.stringContaining('deleted') },
      });
      expect(payloadOf(id)).toBeUndefined();
    } finally {
      await worker.stop();
      await api.stop();
      await database.drop();
    }
  });
});

describe('media URLs and private addresses', () => {
  it('refuses, at fetch time, a public-looking host that resolves to a loopback address', async () => {
    const emu = await startEmulator();
    const files = await startFileServer();
    // Without UNSAFE_ALLOW_PRIVATE_URLS: the name passes the send-time check, its address does not.
    const svc = await startService({
      env: { ...providerEnv(emu), WORKER_POLL_MS: '50' },
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      const customer = await call(svc.url, 'POST', '/admin/customers', {
        admin: true,
        body: { name: 'Media', plan: 'basic' },
      });
      await createAccount(svc.url, customer.body.id, {
        official: {
          phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
          wabaId: 'w1',
          accessToken: 'EAAG-media-token',
        },
      });
      const key = await createKey(svc.url, customer.body.id, {});
      const res = await call(svc.url, 'POST', '/messages', {
        key,
        body: {
          externalId: 'rebind',
          to: { type: 'phone', phoneE164: '+15551239001' },
          content: { type: 'image', image: { url: `https://media.example.test:${new URL(files.url).port}/p.jpg` } },
        },
      });
      expect(res.status).toBe(201);
      const m = await eventually(async () => {
        const r = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key })).body;
        return r.status === 'failed' ? r : undefined;
      });
      expect(m).toMatchObject({
        attemptCount: 0,
        error: { code: 'MEDIA_UNAVAILABLE', message: expect.stringContaining('private or loopback') },
      });
      // The name resolves to the file server's own address and port: not one TCP connection reached it.
      expect(files.connections()).toBe(0);
      expect(emu.state.sent).toHaveLength(0);
    } finally {
      await svc.stop();
      await emu.stop();
      await files.close();
    }
  });
});
