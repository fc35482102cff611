// Every request that acts on a message, and every worker action that changes one, logs the message
// id, customer id and account id as fields.
import net from 'node:net';
import { Writable } from 'node:stream';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp, createLogger } from '../src/app.js';
import {
  call,
  createTenant,
  createTestDatabase,
  eventually,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';

/** A pino logger at `level` whose JSON lines land in `lines`. */
function capture(lines: Record<string, unknown>[], level: string) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level }, sink);
}

/** The service's own logger (its redaction and serializers) at `level`, its JSON lines kept in `lines`. */
function serviceLogger(lines: Record<string, unknown>[], level: string) {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return createLogger({ logLevel: level }, sink);
}

/** Writes `raw` to the server and returns everything it answers until it closes. */
function rawExchange(url: string, raw: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname, () => socket.write(raw));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

/** A service of `role` on its own database for this describe, logging at `level` into `lines`. */
function serviceLoggingTo(
  lines: Record<string, unknown>[],
  role: 'api' | 'all',
  level: string,
  makeLogger: typeof capture = capture,
) {
  const svc = { url: '' };
  let database: TestDatabase;
  let app: App;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await createApp(testConfig({ LOG_LEVEL: level }), { db: database.db, role, log: makeLogger(lines, level) });
    svc.url = (await app.start())!;
  });
  afterAll(async () => {
    await app.stop();
    await database.drop();
  });
  return svc;
}

describe('request log lines', () => {
  const lines: Record<string, unknown>[] = [];
  const svc = serviceLoggingTo(lines, 'api', 'info');

  it('carries messageId, customerId and accountId on a send and a read', async () => {
    const t = await createTenant(svc.url);
    const sent = await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('log-1') });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    expect((await call(svc.url, 'GET', `/messages/${id}`, { key: t.sandboxKey })).status).toBe(200);
    const requests = lines.filter((l) => l.msg === 'request' && String(l.url).startsWith('/messages'));
    expect(requests).toHaveLength(2);
    for (const l of requests)
      expect(l).toMatchObject({ messageId: id, customerId: t.customerId, accountId: t.accountId });
  });
});

describe('worker log lines', () => {
  const lines: Record<string, unknown>[] = [];
  const svc = serviceLoggingTo(lines, 'all', 'debug');

  it('names the message, customer and account of every status change the dispatcher makes', async () => {
    const t = await createTenant(svc.url);
    const ok = await call(svc.url, 'POST', '/messages', {
      key: t.sandboxKey,
      body: textMessage('worker-log-ok', { to: { type: 'phone', phoneE164: '+15551230088' } }),
    });
    const bad = await call(svc.url, 'POST', '/messages', {
      key: t.sandboxKey,
      body: textMessage('worker-log-bad', { to: { type: 'phone', phoneE164: '+15551230099' } }),
    });
    const ids = { customerId: t.customerId, accountId: t.accountId };
    const changes = (messageId: string) => lines.filter((l) => l.messageId === messageId && 'to' in l);
    // 88: sent → delivered → read, each change a debug line; 99: failed, at info, with its code.
    await eventually(async () => changes(ok.body.messageId).some((l) => l.to === 'read'));
    await eventually(async () => changes(bad.body.messageId).some((l) => l.to === 'failed'));
    expect(changes(ok.body.messageId).map((l) => l.to)).toEqual(expect.arrayContaining(['sent', 'delivered', 'read']));
    for (const l of changes(ok.body.messageId)) expect(l).toMatchObject({ ...ids, level: 20 });
    expect(changes(bad.body.messageId).find((l) => l.to === 'failed')).toMatchObject({
      ...ids,
      level: 30,
      errorCode: 'SANDBOX_SIMULATED_FAILURE',
      msg: 'message failed (sandbox)',
    });
  });
});

describe('malformed requests at debug level', () => {
  const lines: Record<string, unknown>[] = [];
  const svc = serviceLoggingTo(lines, 'api', 'debug', serviceLogger);
  const KEY = 'ak_live_rawpacketsecret0123456789';
  const BEARER = 'rawpacket-bearer-secret-0123456789';
  const COOKIE = 'rawpacket-cookie-secret-0123456789';

  it('are logged without the bytes of the request (keys, Authorization, cookies)', async () => {
    // A header value with a control character: Node's parser refuses it and hands the raw bytes
    // it read (rawPacket) with the error.
    const answer = await rawExchange(
      svc.url,
      `GET /messages HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY}\r\nAuthorization: Bearer ${BEARER}\r\n` +
        `Cookie: cg_session=${COOKIE}\r\nX-Bad: a\u0001b\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await eventually(async () => lines.some((l) => l.msg === 'client error'));
    const text = JSON.stringify(lines);
    expect(lines.find((l) => l.msg === 'client error')).toMatchObject({ status: 400, level: 20 });
    for (const secret of [KEY, BEARER, COOKIE]) expect(text).not.toContain(secret);
    expect(text).not.toContain('rawPacket');
  });

  it('and no logged error ever carries rawPacket', () => {
    const seen: Record<string, unknown>[] = [];
    const err = Object.assign(new Error('Parse Error'), { code: 'HPE_X', rawPacket: Buffer.from(`x-api-key: ${KEY}`) });
    serviceLogger(seen, 'debug').debug({ err }, 'some error');
    expect(seen[0]!.err).toMatchObject({ message: 'Parse Error', code: 'HPE_X' });
    expect(JSON.stringify(seen)).not.toContain('rawPacket');
  });
});
