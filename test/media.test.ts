// Media: POST /media (streaming cap, type detection, pending limit, expiry) and mediaId checks at
// send time. Sends through the provider are in media-send.test.ts.
import http from 'node:http';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { purgeOnce } from '../src/purge/purger.js';
import { call, createTenant, type Service, startService } from './support/harness.js';
import { DOCX_BYTES, JPEG_BYTES, PDF_BYTES, PNG_BYTES, upload } from './support/media-files.js';
import type { TestClock } from './support/test-clock.js';

const MB20 = 20 * 1024 * 1024;

const mediaSend = (
  externalId: string,
  kind: 'image' | 'document',
  mediaId: string,
  extra: Record<string, unknown> = {},
) => ({
  externalId,
  to: { type: 'phone', phoneE164: '+15551230077' },
  content: { type: kind, [kind]: { mediaId, ...extra } },
});

describe('POST /media', () => {
  let svc: Service;
  let key: string;
  let customerId: string;

  beforeAll(async () => {
    svc = await startService();
    ({ key, customerId } = await createTenant(svc.url, { plan: 'starter' }));
  });
  afterAll(() => svc.stop());

  it('answers the spec shape and detects the type by content before the Content-Type and the extension', async () => {
    const cases: [Buffer, string, string, string][] = [
      [JPEG_BYTES, 'holiday.txt', 'text/plain', 'image/jpeg'],
      [PNG_BYTES, 'scan.pdf', 'application/pdf', 'image/png'],
      [PDF_BYTES, 'photo.jpg', 'image/jpeg', 'application/pdf'],
      [
        DOCX_BYTES,
        'letter.zip',
        'application/zip',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      ],
      [Buffer.from('just some words\n'), 'fake.png', 'image/png', 'text/plain'],
      [Buffer.from([0, 1, 2, 3, 0, 9]), 'clip.mp4', 'application/octet-stream', 'video/mp4'],
    ];
    for (const [bytes, name, type, expected] of cases) {
      const res = await upload(svc.url, key, bytes, name, type);
      expect(res.status, name).toBe(201);
      expect(res.body).toEqual({
        mediaId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        mimetype: expected,
        sizeBytes: bytes.length,
        filename: name,
        expiresAt: expect.any(String),
      });
      const ttl = Date.parse(res.body.expiresAt) - Date.now();
      expect(ttl).toBeGreaterThan(3500_000);
      expect(ttl).toBeLessThanOrEqual(3600_000);
    }
  });

  it('takes a file of exactly 20 MB and refuses one byte more with 413 media_too_large', async () => {
    const ok = await upload(svc.url, key, Buffer.alloc(MB20, 0x61), 'big.txt', 'text/plain');
    expect(ok.status).toBe(201);
    expect(ok.body.sizeBytes).toBe(MB20);
    const over = await upload(svc.url, key, Buffer.alloc(MB20 + 1, 0x61), 'big.txt', 'text/plain');
    expect(over).toEqual({ status: 413, body: { error: 'media_too_large', message: expect.any(String) } });
  }, 60_000);

  it('refuses a body announced over 20 MB before reading it, and closes the connection', async () => {
    const { port } = new URL(svc.url);
    const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>(
      (resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/media',
            headers: {
              'x-api-key': key,
              'content-type': 'multipart/form-data; boundary=xyz',
              'content-length': String(100 * 1024 * 1024),
            },
          },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode!, body, connection: res.headers.connection }));
          },
        );
        req.on('error', reject);
        // Only the start of the announced 100 MB is ever sent.
        req.write('--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n');
      },
    );
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error).toBe('media_too_large');
    expect(answer.connection).toBe('close');
  });

  it('refuses malformed uploads with validation_error or 415', async () => {
    const fd = new FormData();
    fd.append('other', 'x');
    let res = await fetch(`${svc.url}/media`, { method: 'POST', headers: { 'x-api-key': key }, body: fd });
    expect(res.status).toBe(400);
    const missing = (await res.json()) as any;
    expect(missing.error).toBe('validation_error');
    expect(missing.details.map((d: any) => d.path).sort()).toEqual(['file', 'other']);

    const extra = await upload(svc.url, key, PDF_BYTES, 'a.pdf', 'application/pdf', (f) => f.append('caption', 'hi'));
    expect(extra.status).toBe(400);
    expect(extra.body.details).toEqual([{ path: 'caption', message: expect.any(String) }]);

    const empty = await upload(svc.url, key, Buffer.alloc(0), 'empty.pdf', 'application/pdf');
    expect(empty.body).toEqual({
      error: 'validation_error',
      details: [{ path: 'file', message: 'must not be empty' }],
    });

    const longName = await upload(svc.url, key, PDF_BYTES, `${'n'.repeat(252)}.pdf`, 'application/pdf');
    expect(longName.status).toBe(400);
    expect(longName.body.details[0].path).toBe('file');

    res = await fetch(`${svc.url}/media`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: '{"file":"x"}',
    });
    expect(res.status).toBe(415);

    res = await fetch(`${svc.url}/media`, { method: 'POST', body: new FormData() });
    expect(res.status).toBe(401);
  });

  it('refuses the 201st unused file with 429 media_pending_limit, also under concurrency, and a send frees a place', async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    for (let i = 0; i < 190; i++) expect((await upload(svc.url, t.key, PDF_BYTES, `f${i}.pdf`)).status).toBe(201);
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => upload(svc.url, t.key, PDF_BYTES, `b${i}.pdf`)),
    );
    expect(burst.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = burst.filter((r) => r.status === 429);
    expect(refused).toHaveLength(10);
    expect(refused[0]!.body.error).toBe('media_pending_limit');
    const [row] = await svc.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM media_files WHERE customer_id = $1',
      [t.customerId],
    );
    expect(row!.n).toBe(200);

    const last = burst.find((r) => r.status === 201)!.body.mediaId;
    expect(
      (await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: mediaSend('frees-one', 'document', last) }))
        .status,
    ).toBe(201);
    expect((await upload(svc.url, t.key, PDF_BYTES, 'again.pdf')).status).toBe(201);
    expect((await upload(svc.url, t.key, PDF_BYTES, 'over.pdf')).status).toBe(429);
  }, 60_000);

  it("checks mediaId at send time: unknown, another customer's, wrong kind or too big gives 422 invalid_media", async () => {
    const other = await createTenant(svc.url, { plan: 'starter' });
    const mine = (await upload(svc.url, key, PDF_BYTES, 'doc.pdf')).body.mediaId;
    const theirs = (await upload(svc.url, other.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    const bigJpeg = (await upload(svc.url, key, Buffer.concat([JPEG_BYTES, Buffer.alloc(5 * 1024 * 1024)]), 'big.jpg'))
      .body.mediaId;
    const photo = (await upload(svc.url, key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    const send = (body: unknown) => call(svc.url, 'POST', '/messages', { key, body });

    expect((await send(mediaSend('m1', 'image', '00000000-0000-4000-8000-000000000000'))).body).toEqual({
      error: 'invalid_media',
      code: 'media_not_found',
    });
    expect((await send(mediaSend('m2', 'image', theirs))).body).toEqual({
      error: 'invalid_media',
      code: 'media_not_found',
    });
    for (const [ext, kind, id] of [
      ['m3', 'image', mine],
      ['m4', 'image', bigJpeg],
      ['m5', 'document', photo],
    ] as const) {
      const res = await send(mediaSend(ext, kind, id));
      expect(res.status, ext).toBe(422);
      expect(res.body).toMatchObject({ error: 'invalid_media', code: 'media_type_mismatch' });
    }
    // Nothing was created or charged for the refused sends.
    const [row] = await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE customer_id = $1', [
      customerId,
    ]);
    expect(row!.n).toBe(0);
    // The right kind is accepted, and the same file may serve several messages.
    expect((await send(mediaSend('m6', 'document', mine))).status).toBe(201);
    expect((await send(mediaSend('m7', 'document', mine, { filename: 'renamed.pdf' }))).status).toBe(201);
    expect((await send(mediaSend('m8', 'image', photo))).status).toBe(201);
  });
});

describe('POST /media with hostile bodies', () => {
  let svc: Service;
  let key: string;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
    ({ key } = await createTenant(svc.url, { plan: 'free' }));
  });
  afterAll(() => svc.stop());

  const raw = (headers: Record<string, string>, body: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const { port } = new URL(svc.url);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/media',
          headers: { 'x-api-key': key, 'content-length': String(body.length), ...headers },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('answers every malformed multipart body with a 4xx, never a 5xx', async () => {
    const boundary = fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,40}$/);
    const partHeader = fc.oneof(
      fc.constant('Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf'),
      fc.constant('Content-Disposition: form-data; name="file"'),
      fc.constant('Content-Disposition: attachment'),
      fc.string({ maxLength: 80 }),
    );
    await fc.assert(
      fc.asyncProperty(
        boundary,
        fc.array(fc.tuple(partHeader, fc.uint8Array({ maxLength: 200 })), { maxLength: 3 }),
        fc.nat(),
        fc.boolean(),
        fc.boolean(),
        async (b, parts, cut, close, badType) => {
          const chunks = parts.flatMap(([h, data]) => [
            Buffer.from(`--${b}\r\n${h}\r\n\r\n`),
            Buffer.from(data),
            Buffer.from('\r\n'),
          ]);
          let body = Buffer.concat([...chunks, Buffer.from(close ? `--${b}--\r\n` : '')]);
          if (cut % 3 === 0) body = body.subarray(0, cut % (body.length + 1));
          const status = await raw(
            { 'content-type': badType ? `multipart/form-data; boundary="${b}` : `multipart/form-data; boundary=${b}` },
            body,
          );
          expect([201, 400, 413, 415]).toContain(status);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('unused uploads expire', () => {
  // The spec's hour unused and a message's lifetime pass on the tests' clock (docs/testing.md,
  // test/support/test-clock.ts), not waited out: the product's own lifetimes, no shortened setting.
  let svc: Service;
  let clock: TestClock;
  beforeAll(async () => {
    svc = await startService({ role: 'api', clock: true });
    clock = svc.clock!;
  });
  afterAll(() => svc.stop());

  it('after the unused lifetime a file cannot be sent, no longer counts as pending, and the purger deletes it', async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    const used = (await upload(svc.url, t.key, PDF_BYTES, 'used.pdf')).body.mediaId;
    const unused = (await upload(svc.url, t.key, PDF_BYTES, 'unused.pdf')).body;
    const lastMinute = (await upload(svc.url, t.key, PDF_BYTES, 'last-minute.pdf')).body.mediaId;
    // The spec's hour from the upload (a minute's slack for a busy machine).
    expect(Math.abs(Date.parse(unused.expiresAt) - (Date.now() + 3600_000))).toBeLessThan(60_000);
    expect(
      (await call(svc.url, 'POST', '/messages', { key: t.key, body: mediaSend('keeps-it', 'document', used) })).status,
    ).toBe(201);
    // A minute before the hour, a file is still there to send.
    await clock.advance(Date.parse(unused.expiresAt) - 60_000 - Date.now());
    expect(
      (
        await call(svc.url, 'POST', '/messages', {
          key: t.key,
          body: mediaSend('last-minute', 'document', lastMinute),
        })
      ).status,
    ).toBe(201);
    await clock.advance(120_000);
    const late = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: mediaSend('too-late', 'document', unused.mediaId),
    });
    expect(late.body).toEqual({ error: 'invalid_media', code: 'media_not_found' });
    // Used files do not expire: a second message may still use it while the first waits.
    expect(
      (await call(svc.url, 'POST', '/messages', { key: t.key, body: mediaSend('still-there', 'document', used) }))
        .status,
    ).toBe(201);

    const purged = await purgeOnce(svc.db, 3600, true);
    expect(purged!.media).toBe(1);
    const left = await svc.db.query<{ id: string }>('SELECT id FROM media_files WHERE customer_id = $1', [
      t.customerId,
    ]);
    expect(left.map((r) => r.id).sort()).toEqual([used, lastMinute].sort());
    expect(await svc.db.query('SELECT 1 FROM media_blobs WHERE media_id = $1', [unused.mediaId])).toHaveLength(0);
  });

  it('a file does not outlive the messages that use it: purged with them', async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    const id = (await upload(svc.url, t.key, JPEG_BYTES, 'p.jpg')).body.mediaId;
    // No worker runs here: the message stays pending until its lifetime (an hour) ends.
    expect(
      (
        await call(svc.url, 'POST', '/messages', {
          key: t.key,
          body: { ...mediaSend('short', 'image', id), ttlSeconds: 3600 },
        })
      ).status,
    ).toBe(201);
    await clock.advance(3600_000 - 60_000);
    expect(await purgeOnce(svc.db, 3600, true)).toMatchObject({ messages: 0, media: 0 });
    expect(await svc.db.query('SELECT 1 FROM media_files WHERE id = $1', [id])).toHaveLength(1);
    await clock.advance(120_000);
    const purged = await purgeOnce(svc.db, 3600, true);
    expect(purged).toMatchObject({ messages: 1, media: 1 });
    expect(await svc.db.query('SELECT 1 FROM media_files WHERE id = $1', [id])).toHaveLength(0);
  });
});
