import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  call,
  createAccount,
  createKey,
  createTenant,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';

const paths = (body: { details: { path: string }[] }) => body.details.map((d) => d.path).sort();

describe('POST /messages', () => {
  let svc: Service;
  let t: Awaited<ReturnType<typeof createTenant>>;
  let n = 0;
  const ext = () => `ext-${Date.now()}-${n++}`;
  const send = (body: unknown, key = t.key) => call(svc.url, 'POST', '/messages', { key, body });

  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    t = await createTenant(svc.url, { plan: 'starter' });
  });
  afterAll(() => svc.stop());

  describe('authentication', () => {
    it('answers the exact 401 bodies', async () => {
      expect(await call(svc.url, 'POST', '/messages', { body: textMessage('a') })).toMatchObject({
        status: 401,
        body: { error: 'Missing x-api-key header' },
      });
      expect(await send(textMessage('a'), 'ak_live_nope')).toMatchObject({
        status: 401,
        body: { error: 'Invalid API key' },
      });
      expect(await send(textMessage('a'), `Bearer ${t.key}`)).toMatchObject({
        status: 401,
        body: { error: 'Invalid API key' },
      });
    });

    it('authenticates before validating', async () => {
      expect(await call(svc.url, 'POST', '/messages', { key: 'bad', body: '{not json' })).toMatchObject({
        status: 401,
        body: { error: 'Invalid API key' },
      });
    });

    it('stops a revoked key at once, for reads and writes', async () => {
      const key = await createKey(svc.url, t.customerId, { name: 'short-lived' });
      expect((await send(textMessage(ext()), key)).status).toBe(201);
      const keys = await call(svc.url, 'GET', `/admin/customers/${t.customerId}/api-keys`, { admin: true });
      const id = keys.body.apiKeys.find((k: { name: string }) => k.name === 'short-lived').id;
      expect((await call(svc.url, 'DELETE', `/admin/api-keys/${id}`, { admin: true })).status).toBe(204);
      expect(await send(textMessage(ext()), key)).toMatchObject({ status: 401, body: { error: 'Invalid API key' } });
      expect(await call(svc.url, 'GET', '/messages', { key })).toMatchObject({
        status: 401,
        body: { error: 'Invalid API key' },
      });
    });
  });

  describe('validation', () => {
    it('accepts a valid text message with 201 and the acknowledgement', async () => {
      const externalId = ext();
      const res = await send(
        textMessage(externalId, { metadata: { orderId: 42, tags: ['a'] }, channel: 'chat_official' }),
      );
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        messageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        externalId,
        status: 'pending',
        queued: true,
      });
      const stored = await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: t.key });
      expect(stored.body).toMatchObject({
        status: 'pending',
        recipient: '+15551230000',
        channel: 'chat_official',
        sandbox: false,
        metadata: { orderId: 42, tags: ['a'] },
      });
    });

    it('lists every problem of a bad body at once', async () => {
      const res = await send({
        externalId: '',
        channel: 'sms',
        to: { type: 'email', phoneE164: '12345' },
        content: { type: 'carousel' },
        ttlSeconds: 0,
        extra: true,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(paths(res.body)).toEqual([
        'channel',
        'content.type',
        'externalId',
        'extra',
        'to.phoneE164',
        'to.type',
        'ttlSeconds',
      ]);
      for (const d of res.body.details) expect(typeof d.message).toBe('string');
    });

    it("names the spec's to.phoneE164 when to has no type, or one we do not know, and no number", async () => {
      for (const to of [{}, { type: 'email' }]) {
        const res = await send({ externalId: 'no-number', to, content: { type: 'text', text: 'hi' } });
        expect(res.status).toBe(400);
        expect(paths(res.body)).toEqual(['to.phoneE164', 'to.type']);
      }
    });

    it('requires the top-level fields', async () => {
      const res = await send({});
      expect(paths(res.body)).toEqual(['content', 'externalId', 'to']);
      expect(res.body.details[0].message).toBe('is required');
    });

    it('refuses a body that is not JSON', async () => {
      const res = await call(svc.url, 'POST', '/messages', { key: t.key, body: '{"externalId":' });
      expect(res).toMatchObject({ status: 400, body: { error: 'validation_error' } });
    });

    it.each([
      ['+1234567', 201],
      ['+123456789012345', 201],
      ['+123456', 400],
      ['+1234567890123456', 400],
      ['15551234567', 400],
      ['+1555 123 4567', 400],
    ])('phoneE164 %s → %i', async (phone, status) => {
      expect((await send({ ...textMessage(ext()), to: { type: 'phone', phoneE164: phone } })).status).toBe(status);
    });

    it('bounds externalId to 1–200 characters and text to 1–10,000', async () => {
      expect((await send(textMessage('x'.repeat(200)))).status).toBe(201);
      expect(paths((await send(textMessage('x'.repeat(201)))).body)).toEqual(['externalId']);
      expect((await send({ ...textMessage(ext()), content: { type: 'text', text: 'y'.repeat(10000) } })).status).toBe(
        201,
      );
      expect(
        paths((await send({ ...textMessage(ext()), content: { type: 'text', text: 'y'.repeat(10001) } })).body),
      ).toEqual(['content.text']);
      expect(paths((await send({ ...textMessage(ext()), content: { type: 'text', text: '' } })).body)).toEqual([
        'content.text',
      ]);
      expect(paths((await send({ ...textMessage(ext()), content: { type: 'text' } })).body)).toEqual(['content.text']);
    });

    it('matches content fields to content.type', async () => {
      const res = await send({
        ...textMessage(ext()),
        content: { type: 'text', text: 'hi', image: { url: 'https://example.com/a.png' }, caption: 'c' },
      });
      expect(res.body.details).toEqual(
        expect.arrayContaining([
          { path: 'content.image', message: 'is not allowed when content.type is text' },
          { path: 'content.caption', message: 'is allowed only for image, document and video content' },
        ]),
      );
      expect(paths((await send({ ...textMessage(ext()), content: { type: 'template' } })).body)).toEqual([
        'content.template',
      ]);
    });

    it('validates template content', async () => {
      const ok = await send({
        ...textMessage(ext()),
        content: {
          type: 'template',
          template: { name: 'order_update', language: 'en_US', components: { body: ['Ann', '42'], header: ['H'] } },
        },
      });
      expect(ok.status).toBe(201);
      const noVars = await send({
        ...textMessage(ext()),
        content: { type: 'template', template: { name: 'hello_world', language: 'en' } },
      });
      expect(noVars.status).toBe(201);
      const bad = await send({
        ...textMessage(ext()),
        content: {
          type: 'template',
          template: { name: 'Bad Name', language: 'english!', components: { body: ['', 3], footer: [] } },
        },
      });
      expect(paths(bad.body)).toEqual([
        'content.template.components.body.0',
        'content.template.components.body.1',
        'content.template.components.footer',
        'content.template.language',
        'content.template.name',
      ]);
    });

    it('validates image and document content', async () => {
      const image = (image: unknown, extra: Record<string, unknown> = {}) =>
        send({ ...textMessage(ext()), content: { type: 'image', image, ...extra } });
      expect((await image({ url: 'https://cdn.example.com/a.png' }, { caption: 'c'.repeat(1024) })).status).toBe(201);
      expect(
        paths((await image({ url: 'https://cdn.example.com/a.png' }, { caption: 'c'.repeat(1025) })).body),
      ).toEqual(['content.caption']);
      expect((await image({})).body.details).toEqual([
        { path: 'content.image', message: 'must have exactly one of url or mediaId' },
      ]);
      expect(
        (await image({ url: 'https://example.com/a.png', mediaId: '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f' })).body
          .details[0].path,
      ).toBe('content.image');
      expect(paths((await image({ url: `https://example.com/${'a'.repeat(2040)}` })).body)).toEqual([
        'content.image.url',
      ]);
      for (const url of [
        'http://example.com/a.png',
        'https://user:pw@example.com/a.png',
        'https://127.0.0.1/a.png',
        'https://localhost/a.png',
        'https://[::1]/a.png',
        'https://[::127.0.0.1]/a.png',
        'https://[::a9fe:a9fe]/a.png',
        'https://10.1.2.3/a.png',
        'https://2130706433/a.png',
        'not a url',
      ]) {
        const res = await image({ url });
        expect(res.status, url).toBe(400);
        expect(paths(res.body), url).toEqual(['content.image.url']);
      }
      expect(paths((await image({ url: 'https://example.com/a.png', filename: 'a.png' })).body)).toEqual([
        'content.image.filename',
      ]);
      const doc = (document: unknown) => send({ ...textMessage(ext()), content: { type: 'document', document } });
      expect((await doc({ url: 'https://example.com/files/report.pdf', filename: 'r.pdf' })).status).toBe(201);
      expect(paths((await doc({ url: 'https://example.com/r.pdf', filename: 'f'.repeat(256) })).body)).toEqual([
        'content.document.filename',
      ]);
    });

    it('media limits at the limit and one over: a 255-character filename, a 2,048-character URL', async () => {
      const doc = (document: unknown) => send({ ...textMessage(ext()), content: { type: 'document', document } });
      const image = (img: unknown) => send({ ...textMessage(ext()), content: { type: 'image', image: img } });
      // Document filename: up to 255 characters.
      expect((await doc({ url: 'https://example.com/r.pdf', filename: `${'f'.repeat(251)}.pdf` })).status).toBe(201);
      expect(paths((await doc({ url: 'https://example.com/r.pdf', filename: `${'f'.repeat(252)}.pdf` })).body)).toEqual(
        ['content.document.filename'],
      );
      // Media URL: up to 2,048 characters, for images and documents alike.
      const urlOf = (length: number, ext: string) => {
        const head = 'https://example.com/';
        return `${head}${'a'.repeat(length - head.length - ext.length)}${ext}`;
      };
      expect(urlOf(2048, '.png')).toHaveLength(2048);
      expect((await image({ url: urlOf(2048, '.png') })).status).toBe(201);
      expect(paths((await image({ url: urlOf(2049, '.png') })).body)).toEqual(['content.image.url']);
      expect((await doc({ url: urlOf(2048, '.pdf') })).status).toBe(201);
      expect(paths((await doc({ url: urlOf(2049, '.pdf') })).body)).toEqual(['content.document.url']);
    });

    it('answers invalid_media for a mediaId that does not exist', async () => {
      const res = await send({
        ...textMessage(ext()),
        content: { type: 'image', image: { mediaId: '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f' } },
      });
      expect(res).toMatchObject({ status: 422, body: { error: 'invalid_media', code: 'media_not_found' } });
    });

    it('bounds metadata and requires it to be an object', async () => {
      expect(paths((await send(textMessage(ext(), { metadata: 'x' }))).body)).toEqual(['metadata']);
      expect(paths((await send(textMessage(ext(), { metadata: { big: 'z'.repeat(17000) } }))).body)).toEqual([
        'metadata',
      ]);
    });

    it('refuses oversized bodies with 413', async () => {
      const res = await send(textMessage(ext(), { metadata: { big: 'z'.repeat(1_100_000) } }));
      expect(res).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    });
  });

  describe('lifetime', () => {
    it('takes ttlSeconds up to 30 days and clips it to the plan retention', async () => {
      const check = async (ttlSeconds: number | undefined, expectedSeconds: number) => {
        const res = await send(textMessage(ext(), ttlSeconds === undefined ? {} : { ttlSeconds }));
        expect(res.status).toBe(201);
        const m = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: t.key })).body;
        expect((Date.parse(m.expiresAt) - Date.parse(m.createdAt)) / 1000).toBe(expectedSeconds);
      };
      await check(undefined, 604800);
      await check(3600, 3600);
      await check(2_592_000, 2_592_000);
      const free = await createTenant(svc.url, { plan: 'free' });
      for (const body of [textMessage(ext()), textMessage(ext(), { ttlSeconds: 2_592_000 })]) {
        const res = await call(svc.url, 'POST', '/messages', { key: free.key, body });
        expect(res.status).toBe(201);
        const m = (await call(svc.url, 'GET', `/messages/${res.body.messageId}`, { key: free.key })).body;
        expect((Date.parse(m.expiresAt) - Date.parse(m.createdAt)) / 1000).toBe(3 * 86400);
      }
    });

    it('refuses ttlSeconds above 30 days (2,592,000) with validation_error, creating nothing', async () => {
      for (const ttlSeconds of [2_592_001, 40 * 86400]) {
        const externalId = ext();
        const res = await send(textMessage(externalId, { ttlSeconds }));
        expect(res.status, String(ttlSeconds)).toBe(400);
        expect(res.body).toEqual({
          error: 'validation_error',
          details: [{ path: 'ttlSeconds', message: expect.any(String) }],
        });
        expect((await call(svc.url, 'GET', `/messages/${externalId}`, { key: t.key })).status).toBe(404);
      }
    });
  });

  describe('plan gates', () => {
    it('refuses template sends on Free, except with a sandbox key', async () => {
      const free = await createTenant(svc.url, { plan: 'free' });
      const body = {
        ...textMessage(ext()),
        content: { type: 'template', template: { name: 'hello', language: 'en' } },
      };
      expect(await call(svc.url, 'POST', '/messages', { key: free.key, body })).toMatchObject({
        status: 403,
        body: { error: 'templates_not_available' },
      });
      expect((await call(svc.url, 'POST', '/messages', { key: free.sandboxKey, body })).status).toBe(201);
      expect((await call(svc.url, 'POST', '/messages', { key: free.key, body: textMessage(ext()) })).status).toBe(201);
    });
  });

  describe('account resolution', () => {
    it('implies the only official account, requires chatAccountId with several or none', async () => {
      const two = await createTenant(svc.url, { plan: 'pro', accounts: 2 });
      expect(await call(svc.url, 'POST', '/messages', { key: two.key, body: textMessage(ext()) })).toMatchObject({
        status: 422,
        body: { error: 'chat_account_required' },
      });
      const ok = await call(svc.url, 'POST', '/messages', {
        key: two.key,
        body: textMessage(ext(), { chatAccountId: two.accountIds[1] }),
      });
      expect(ok.status).toBe(201);
      expect((await call(svc.url, 'GET', `/messages/${ok.body.messageId}`, { key: two.key })).body.chatAccountId).toBe(
        two.accountIds[1],
      );

      const customer = await call(svc.url, 'POST', '/admin/customers', {
        admin: true,
        body: { name: 'none', plan: 'pro' },
      });
      const noneKey = await createKey(svc.url, customer.body.id, {});
      expect(await call(svc.url, 'POST', '/messages', { key: noneKey, body: textMessage(ext()) })).toMatchObject({
        status: 422,
        body: { error: 'chat_account_required' },
      });
      await createAccount(svc.url, customer.body.id, { type: 'DIRECT', official: undefined });
      expect(await call(svc.url, 'POST', '/messages', { key: noneKey, body: textMessage(ext()) })).toMatchObject({
        status: 422,
        body: { error: 'chat_account_required' },
      });
    });

    it('refuses an unknown, foreign or DIRECT chatAccountId with invalid_chat_account', async () => {
      const other = await createTenant(svc.url);
      for (const id of ['6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f', other.accountId]) {
        expect(await send(textMessage(ext(), { chatAccountId: id }))).toMatchObject({
          status: 422,
          body: { error: 'invalid_chat_account' },
        });
      }
      const pro = await createTenant(svc.url, { plan: 'pro' });
      const direct = await createAccount(svc.url, pro.customerId, { type: 'DIRECT', official: undefined });
      expect(
        await call(svc.url, 'POST', '/messages', { key: pro.key, body: textMessage(ext(), { chatAccountId: direct }) }),
      ).toMatchObject({ status: 422, body: { error: 'invalid_chat_account' } });
    });

    it('fills chatAccountId for a scoped key and refuses another', async () => {
      const pro = await createTenant(svc.url, { plan: 'pro', accounts: 2 });
      const scoped = await createKey(svc.url, pro.customerId, { chatAccountId: pro.accountIds[1] });
      const ok = await call(svc.url, 'POST', '/messages', { key: scoped, body: textMessage(ext()) });
      expect(ok.status).toBe(201);
      expect((await call(svc.url, 'GET', `/messages/${ok.body.messageId}`, { key: scoped })).body.chatAccountId).toBe(
        pro.accountIds[1],
      );
      expect(
        await call(svc.url, 'POST', '/messages', {
          key: scoped,
          body: textMessage(ext(), { chatAccountId: pro.accountIds[0] }),
        }),
      ).toMatchObject({ status: 403, body: { error: 'key_scope_violation' } });
      expect(
        (
          await call(svc.url, 'POST', '/messages', {
            key: scoped,
            body: textMessage(ext(), { chatAccountId: pro.accountIds[1] }),
          })
        ).status,
      ).toBe(201);
    });
  });

  describe('idempotency', () => {
    it('answers 201, then 200 with the original for the same payload, and 409 for another', async () => {
      const body = textMessage(ext(), { metadata: { a: 1, b: [1, 2] } });
      const first = await send(body);
      expect(first.status).toBe(201);
      const reordered = {
        content: body.content,
        metadata: { b: [1, 2], a: 1 },
        to: body.to,
        externalId: body.externalId,
      };
      const again = await send(reordered);
      expect(again.status).toBe(200);
      expect(again.body.messageId).toBe(first.body.messageId);
      const changed = await send({ ...body, content: { type: 'text', text: 'other' } });
      expect(changed).toMatchObject({ status: 409, body: { error: 'conflict' } });
      const list = await call(svc.url, 'GET', `/messages?externalId=${body.externalId}`, { key: t.key });
      expect(list.body.messages).toHaveLength(1);
    });

    it('treats a sandbox and a live send with one externalId as different payloads', async () => {
      const body = textMessage(ext());
      expect((await send(body, t.sandboxKey)).status).toBe(201);
      expect((await send(body, t.key)).status).toBe(409);
    });

    it('gives exactly one 201 to 20 identical concurrent requests', async () => {
      const body = textMessage(ext());
      const replies = await Promise.all(Array.from({ length: 20 }, () => send(body)));
      const statuses = replies.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(19);
      expect(new Set(replies.map((r) => r.body.messageId)).size).toBe(1);
      const [row] = await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages WHERE external_id = $1',
        [body.externalId],
      );
      expect(row!.n).toBe(1);
    });

    it('charges the quota once for an idempotent repeat', async () => {
      const pro = await createTenant(svc.url, { plan: 'pro' });
      const body = textMessage(ext());
      await call(svc.url, 'POST', '/messages', { key: pro.key, body });
      await call(svc.url, 'POST', '/messages', { key: pro.key, body });
      const customer = await call(svc.url, 'GET', `/admin/customers/${pro.customerId}`, { admin: true });
      expect(customer.body.usage).toMatchObject({ used: 1, limit: 20000 });
    });
  });
});
