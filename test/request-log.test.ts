// Every request that acts on a message, and every worker action that changes one, logs the message
// id, customer id and account id as fields.
import crypto from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp, createLogger } from '../src/app.js';
import { formatLine } from '../src/shared/pretty-log.js';
import { APP_SECRET, type Emulator, providerEnv, resetEmulator, startEmulator } from './support/emulator.js';
import {
  call,
  createTenant,
  createTestDatabase,
  eventually,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { officialCustomer } from './support/official-customer.js';
import { type Receiver, startReceiver } from './support/receiver.js';

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
  env: () => Record<string, string> = () => ({}),
  makeLogger: typeof capture = capture,
) {
  const svc = { url: '', stopped: false, stop: async () => {} };
  let database: TestDatabase;
  let app: App;
  beforeAll(async () => {
    database = await createTestDatabase();
    app = await createApp(testConfig({ LOG_LEVEL: level, ...env() }), {
      db: database.db,
      role,
      log: makeLogger(lines, level),
    });
    svc.url = (await app.start())!;
    svc.stop = async () => {
      if (svc.stopped) return;
      svc.stopped = true;
      await app.stop();
    };
  });
  afterAll(async () => {
    await svc.stop();
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

describe('probes, scrapes and receipts at debug', () => {
  const lines: Record<string, unknown>[] = [];
  const svc = serviceLoggingTo(lines, 'api', 'debug', () => ({ PROVIDER_APP_SECRET: APP_SECRET }));

  it('logs /healthz, /readyz, /metrics and accepted receipt POSTs at debug; their failures and the API at info', async () => {
    const receipt = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const signature = `sha256=${crypto.createHmac('sha256', APP_SECRET).update(receipt).digest('hex')}`;
    const post = (sig: string) =>
      fetch(`${svc.url}/provider/webhooks/app`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': sig },
        body: receipt,
      });
    expect((await call(svc.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(svc.url, 'GET', '/readyz')).status).toBe(200);
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(200);
    expect((await post(signature)).status).toBe(200);
    expect((await post('sha256=00')).status).toBe(401);
    expect((await call(svc.url, 'GET', '/chat-accounts')).status).toBe(401);
    const level = (url: string, status: number) =>
      lines.filter((l) => l.msg === 'request' && l.url === url && l.status === status).map((l) => l.level);
    expect(level('/healthz', 200)).toEqual([20]);
    expect(level('/readyz', 200)).toEqual([20]);
    expect(level('/metrics', 200)).toEqual([20]);
    expect(level('/provider/webhooks/app', 200)).toEqual([20]);
    expect(level('/provider/webhooks/app', 401)).toEqual([30]);
    expect(level('/chat-accounts', 401)).toEqual([30]);
  });
});

describe('what an operator reads at info: workers starting and stopping, failed deliveries, retried sends', () => {
  const lines: Record<string, unknown>[] = [];
  let emu: Emulator;
  let rx: Receiver;
  beforeAll(async () => {
    emu = await startEmulator();
    rx = await startReceiver();
  });
  const svc = serviceLoggingTo(lines, 'all', 'info', () => ({
    ...providerEnv(emu),
    WORKER_POLL_MS: '50',
    UNSAFE_ALLOW_PRIVATE_URLS: 'true',
  }));
  afterAll(async () => {
    await rx?.close();
    await emu?.stop();
  });
  const info = () => lines.filter((l) => (l.level as number) >= 30);
  const workers = (msg: string) =>
    info()
      .filter((l) => l.msg === msg)
      .map((l) => l.worker as string)
      .sort();

  it('a worker says when it starts', () => {
    expect(workers('worker started')).toEqual(expect.arrayContaining(['deliverer', 'dispatcher']));
    for (const l of info().filter((x) => x.msg === 'worker started')) expect(l.pollMs).toEqual(expect.any(Number));
  });

  it('a webhook delivery that fails writes one warn line with its ids, attempt and next try', async () => {
    const t = await createTenant(svc.url, { plan: 'basic' });
    const endpoint = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${rx.url}/fail` },
    });
    expect(endpoint.status).toBe(201);
    rx.respond({ status: 503 });
    const queued = await call(svc.url, 'POST', `/webhook-endpoints/${endpoint.body.id}/test`, { key: t.key });
    const line = await eventually(async () =>
      info().find((l) => l.eventId === queued.body.eventId && l.msg === 'webhook delivery failed, will retry'),
    );
    expect(line).toMatchObject({
      level: 40,
      endpointId: endpoint.body.id,
      deliveryId: expect.any(String),
      eventType: 'webhook.test',
      attempt: 1,
      httpStatus: 503,
      reason: 'HTTP 503',
      retryAt: expect.any(String),
    });
  });

  it('a send that is retried writes one warn line with the message, customer and account', async () => {
    await resetEmulator(emu);
    await emu.settings({ callbackUrl: `${svc.url}/provider/webhooks/app` });
    const t = await officialCustomer(svc.url, emu);
    await emu.rule({ phoneNumberId: t.phoneNumberIds[0], times: 1, httpStatus: 429, error: { code: 130429 } });
    const sent = await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('log-retry') });
    expect(sent.status).toBe(201);
    const line = await eventually(async () =>
      info().find((l) => l.messageId === sent.body.messageId && String(l.msg).startsWith('send failed, will retry')),
    );
    expect(line).toMatchObject({
      level: 40,
      customerId: t.customerId,
      accountId: t.accountIds[0],
      errorCode: 'PROVIDER_RATE_LIMITED',
      attempt: 1,
      retryAt: expect.any(String),
    });
  });

  it('a worker says when it stops', async () => {
    const started = workers('worker started');
    await svc.stop();
    expect(workers('worker stopped')).toEqual(started);
  });
});

describe('LOG_FORMAT=pretty', () => {
  it('writes one readable line per entry, fields as key=value, while json stays the default', () => {
    expect(testConfig().logFormat).toBe('json');
    expect(() => testConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT must be json or pretty/);
    const out: string[] = [];
    const log = createLogger(testConfig({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' }), {
      write: (text: string) => out.push(text),
    });
    log.warn({ deliveryId: 'd-1', attempt: 2, reason: 'HTTP 503' }, 'webhook delivery failed, will retry');
    log.flush();
    expect(out.join('')).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN  webhook delivery failed, will retry  deliveryId=d-1 attempt=2 reason="HTTP 503"\n$/,
    );
    expect(formatLine('not json')).toBe('not json');
  });
});

describe('malformed requests at debug level', () => {
  const lines: Record<string, unknown>[] = [];
  const svc = serviceLoggingTo(lines, 'api', 'debug', () => ({}), serviceLogger);
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

  it('redacts secret fields one level down in any logged object and leaves the object alone', () => {
    const seen: Record<string, unknown>[] = [];
    const account = { id: 'acc-1', accessToken: 'EAAG-logged-token', wabaId: 'w1' };
    const err = Object.assign(new Error('refused'), { appSecret: 'logged-app-secret', code: 'X' });
    const log = serviceLogger(seen, 'info');
    log.info(
      {
        account,
        endpoint: { url: 'https://example.com', key: 'logged-endpoint-key' },
        err,
        req: { headers: { 'x-api-key': 'logged-api-key', authorization: 'Bearer logged-bearer', accept: '*/*' } },
        settings: { managementToken: 'logged-mgmt-token', on: true },
        key: 'top-level-is-not-a-secret-field',
      },
      'line',
    );
    const [line] = seen as any[];
    expect(line.account).toEqual({ id: 'acc-1', accessToken: '[redacted]', wabaId: 'w1' });
    expect(line.endpoint).toEqual({ url: 'https://example.com', key: '[redacted]' });
    expect(line.err).toMatchObject({ message: 'refused', code: 'X', appSecret: '[redacted]', type: 'Error' });
    expect(line.err.stack).toContain('refused');
    expect(line.req.headers).toEqual({ 'x-api-key': '[redacted]', authorization: '[redacted]', accept: '*/*' });
    expect(line.settings).toEqual({ managementToken: '[redacted]', on: true });
    expect(line.key).toBe('top-level-is-not-a-secret-field');
    // The caller's objects are not changed by logging them.
    expect(account.accessToken).toBe('EAAG-logged-token');
    expect(err.appSecret).toBe('logged-app-secret');
  });
});
