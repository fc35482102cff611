// The @chatgate/client package (packages/client, imported from its source) against the real service.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  ChatGate,
  ChatGateError,
  ChatGateOperator,
  isChatGateError,
  verifyWebhookSignature,
  WEBHOOK_EVENT_TYPES,
} from '../packages/client/src/index.js';
import { EVENT_TYPES } from '../src/shared/vocab.js';
import { checkedFetch } from './support/checked-fetch.js';
import { ADMIN_TOKEN, createTenant, eventually, type Service, startService, type Tenant } from './support/harness.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const to = (phoneE164: string) => ({ type: 'phone' as const, phoneE164 });

/** The ChatGateError a call ends with (a call that succeeds fails the test). */
const failure = (call: Promise<unknown>) =>
  call.then(
    () => expect.fail('the call succeeded'),
    (e: unknown) => e as ChatGateError,
  );

/** A fetch that sends each request, then loses the first `lose` answers (the request did arrive). */
function losingFetch(lose: number) {
  let calls = 0;
  const fetchFn: typeof fetch = async (input, init) => {
    calls++;
    const res = await checkedFetch(input, init);
    if (calls <= lose) {
      await res.arrayBuffer();
      throw new TypeError('fetch failed (answer lost)');
    }
    return res;
  };
  return { fetch: fetchFn, calls: () => calls };
}

describe('@chatgate/client', () => {
  let svc: Service;
  let tenant: Tenant;
  let rx: Receiver;
  beforeAll(async () => {
    svc = await startService({ env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true', WORKER_POLL_MS: '50' } });
    tenant = await createTenant(svc.url, { plan: 'pro' });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await svc?.stop();
  });

  const client = (key: string, extra: Partial<ConstructorParameters<typeof ChatGate>[0]> = {}) =>
    new ChatGate({ apiKey: key, baseUrl: svc.url, retryDelayMs: 10, fetch: checkedFetch, ...extra });

  it('sends, answers a repeat with the original, and reads the message as it moves on', async () => {
    const cg = client(tenant.sandboxKey);
    const body = { externalId: 'client-1', to: to('+15551230088'), content: { type: 'text' as const, text: 'Hi' } };
    const first = await cg.sendMessage(body);
    expect(first).toMatchObject({ externalId: 'client-1', status: 'pending', queued: true, created: true });
    const again = await cg.sendMessage(body);
    expect(again).toMatchObject({ messageId: first.messageId, created: false });
    const read = await eventually(async () => {
      const m = await cg.getMessage('client-1');
      return m.status === 'read' && m;
    });
    expect(read).toMatchObject({ messageId: first.messageId, sandbox: true, readAt: expect.any(String) });
    const page = await cg.listMessages({ externalId: 'client-1' });
    expect(page.messages.map((m) => m.messageId)).toEqual([first.messageId]);
    const all = [];
    for await (const m of cg.iterateMessages({ limit: 1 })) all.push(m.messageId);
    expect(all).toContain(first.messageId);
  });

  it('retries a send whose answer was lost with the same externalId: one message, the original answer', async () => {
    const lossy = losingFetch(2);
    const cg = client(tenant.sandboxKey, { fetch: lossy.fetch });
    const ack = await cg.sendMessage({
      externalId: 'client-lost-answer',
      to: to('+15551230001'),
      content: { type: 'text', text: 'once' },
    });
    expect(lossy.calls()).toBe(3);
    expect(ack.created).toBe(false); // the first try created it; the retries are repeats
    const page = await client(tenant.sandboxKey).listMessages({ externalId: 'client-lost-answer' });
    expect(page.messages).toHaveLength(1);
    expect(page.messages[0]!.messageId).toBe(ack.messageId);
  });

  it('gives up after its retries with a network_error, and does not retry calls that are not repeatable', async () => {
    const down = client(tenant.sandboxKey, { baseUrl: 'http://127.0.0.1:9', retries: 2 });
    const err = await down.getMessage('x').catch((e: unknown) => e);
    expect(isChatGateError(err, 'network_error')).toBe(true);
    expect((err as ChatGateError).status).toBe(0);

    const lossy = losingFetch(1);
    const once = client(tenant.key, { fetch: lossy.fetch });
    await expect(once.createWebhookEndpoint({ url: `${rx.url}/once` })).rejects.toMatchObject({
      error: 'network_error',
    });
    expect(lossy.calls()).toBe(1);
  });

  it('throws typed errors: code, status, details, extra fields and the request id', async () => {
    const cg = client(tenant.sandboxKey);
    const conflict = await cg
      .sendMessage({ externalId: 'client-1', to: to('+15551230088'), content: { type: 'text', text: 'other' } })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ChatGateError);
    expect(conflict).toMatchObject({ status: 409, error: 'conflict' });
    expect((conflict as ChatGateError).requestId).toMatch(/.+/);

    const invalid = await cg
      .sendMessage({ externalId: 'client-bad', to: to('12'), content: { type: 'text', text: '' } })
      .then(() => null)
      .catch((e: unknown) => e as ChatGateError);
    expect(invalid).toMatchObject({ status: 400, error: 'validation_error' });
    expect(invalid!.details.map((d) => d.path)).toEqual(expect.arrayContaining(['to.phoneE164', 'content.text']));

    await expect(client('ak_live_nope').listChatAccounts()).rejects.toMatchObject({
      status: 401,
      error: 'Invalid API key',
    });
    await expect(cg.getMessage('no-such-message')).rejects.toMatchObject({ status: 404, error: 'message_not_found' });

    const free = await createTenant(svc.url, { plan: 'free' });
    const gated = await client(free.key)
      .listWebhookEndpoints()
      .catch((e: unknown) => e as ChatGateError);
    expect(gated).toMatchObject({ status: 403, error: 'feature_not_available', body: { plan: 'free' } });
  });

  it('looks up senders and lists accounts', async () => {
    const cg = client(tenant.sandboxKey);
    expect(await cg.getSender('+15551230077')).toMatchObject({ hasWritten: true, inboundCount: 3, sandbox: true });
    const senders = await cg.lookupSenders({ phones: ['+15551230077', '+15551230010'] });
    expect(senders.map((s) => [s.phoneE164, s.hasWritten])).toEqual([
      ['+15551230077', true],
      ['+15551230010', false],
    ]);
    const accounts = await cg.listChatAccounts();
    expect(accounts.map((a) => a.id)).toEqual([tenant.accountId]);
    expect((await client(tenant.key).listInboundMessages()).inboundMessages).toEqual([]);
    await expect(client(tenant.key).getInboundMessage('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      status: 404,
      error: 'inbound_message_not_found',
    });
  });

  it('broadcasts: send, repeat, read and cancel', async () => {
    const cg = client(tenant.key);
    const body = {
      externalId: 'client-broadcast',
      name: 'Client test',
      content: { type: 'text' as const, text: 'To all' },
      recipients: [{ phoneE164: '+15551230101' }, { phoneE164: '+15551230102' }],
    };
    const ack = await cg.sendBroadcast(body);
    expect(ack).toMatchObject({ recipients: 2, queued: 2, name: 'Client test', created: true });
    expect(await cg.sendBroadcast(body)).toMatchObject({ broadcastId: ack.broadcastId, created: false });
    expect(await cg.getBroadcast('client-broadcast')).toMatchObject({ broadcastId: ack.broadcastId, recipients: 2 });
    expect((await cg.listBroadcasts()).broadcasts.map((b) => b.broadcastId)).toContain(ack.broadcastId);
    expect(await cg.cancelBroadcast(ack.broadcastId)).toMatchObject({ broadcastId: ack.broadcastId });
    await expect(client(tenant.sandboxKey).sendBroadcast(body)).rejects.toMatchObject({
      status: 403,
      error: 'sandbox_not_supported',
    });
  });

  it('cancels a message, reads usage, and manages suppressions, opt-out keywords, the inbox filter and forwarding rules', async () => {
    const own = await createTenant(svc.url, { plan: 'pro' });
    const cg = client(own.key);
    const sendAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, '.000Z');
    const later = await cg.sendMessage({
      externalId: 'client-cancel',
      to: to('+15551230201'),
      content: { type: 'text', text: 'later' },
      sendAt,
    });
    const cancelled = await cg.cancelMessage('client-cancel');
    expect(cancelled).toMatchObject({ messageId: later.messageId, status: 'failed' });
    expect(await cg.cancelMessage(later.messageId)).toMatchObject({ messageId: later.messageId, status: 'failed' });

    const usage = await cg.getUsage();
    expect(usage).toMatchObject({ plan: 'pro', month: expect.stringMatching(/^\d{4}-\d{2}$/) });
    expect((await cg.getUsage({ month: usage.month })).month).toBe(usage.month);

    const added = await cg.addSuppression(own.accountId, { phone: '+15551230202', reason: 'asked' });
    expect(added).toMatchObject({ phone: '+15551230202', source: 'customer', created: true });
    expect(await cg.addSuppression(own.accountId, { phone: '+15551230202' })).toMatchObject({ created: false });
    expect((await cg.listSuppressions(own.accountId, { limit: 10 })).suppressions.map((x) => x.phone)).toEqual([
      '+15551230202',
    ]);
    await cg.removeSuppression(own.accountId, '+15551230202');
    expect((await cg.listSuppressions(own.accountId)).suppressions).toEqual([]);

    expect((await cg.setOptOutKeywords(own.accountId, { keywords: ['STOPPEN'] })).keywords).toEqual(['STOPPEN']);
    expect((await cg.getOptOutKeywords(own.accountId)).keywords).toEqual(['STOPPEN']);

    const filter = await cg.setInboxFilter(own.accountId, { mode: 'whitelist', numbers: ['+15551230203'] });
    expect(filter).toMatchObject({ mode: 'whitelist', numbers: ['+15551230203'] });
    expect(await cg.getInboxFilter(own.accountId)).toEqual(filter);

    const rule = await cg.createForwardingRule({
      name: 'client rule',
      condition: { type: 'contains', pattern: 'help' },
      destination: { type: 'http', url: `${rx.url}/forward` },
    });
    expect((await cg.listForwardingRules()).map((r) => r.id)).toEqual([rule.id]);
    expect(await cg.getForwardingRule(rule.id)).toMatchObject({ id: rule.id, name: 'client rule' });
    expect(await cg.updateForwardingRule(rule.id, { isActive: false })).toMatchObject({ isActive: false });
    await cg.deleteForwardingRule(rule.id);
    await expect(cg.getForwardingRule(rule.id)).rejects.toMatchObject({
      status: 404,
      error: 'forwarding_rule_not_found',
    });
  });

  it('says in its message what the answer says: validation problems, the refused URL and the network cause', async () => {
    const cg = client(tenant.key);
    const invalid = await failure(
      cg.sendMessage({ externalId: 'client-msg', to: to('12'), content: { type: 'text', text: 'x' } }),
    );
    expect(invalid.message).toMatch(/^400 validation_error: to\.phoneE164: \S.*\[request .+\]$/);

    const refused = await failure(
      client(tenant.key, { fetch }).createWebhookEndpoint({ url: 'https://user:secret@example.com/hooks' }),
    );
    expect(refused).toMatchObject({ status: 400, error: 'invalid_webhook_url' });
    expect(refused.message).toContain(`invalid_webhook_url: ${refused.body.reason as string}`);

    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await failure(client(tenant.key, { baseUrl: `http://127.0.0.1:${port}`, retries: 0 }).getUsage());
    expect(down).toMatchObject({ status: 0, error: 'network_error' });
    expect(down.message).toMatch(
      /^network_error: fetch failed: .*ECONNREFUSED.* \(GET http:\/\/127\.0\.0\.1:\d+\/usage\)$/,
    );
  });

  it('manages webhook endpoints; events verify with verifyWebhookSignature, both secrets during a rotation', async () => {
    const own = await createTenant(svc.url, { plan: 'basic' }); // no other test's events
    const cg = client(own.key);
    const created = await cg.createWebhookEndpoint({ url: `${rx.url}/hooks`, events: ['message.status'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect((await cg.listWebhookEndpoints()).map((e) => e.id)).toContain(created.id);
    expect(await cg.getWebhookEndpoint(created.id)).not.toHaveProperty('secret');
    expect(await cg.updateWebhookEndpoint(created.id, { description: 'client test' })).toMatchObject({
      description: 'client test',
    });

    const queued = await cg.testWebhookEndpoint(created.id);
    const [first] = await rx.waitForRequests(1, { filter: (r) => r.headers['x-svc-event-id'] === queued.eventId });
    const header = first!.headers['x-svc-signature'] as string;
    expect(verifyWebhookSignature(first!.rawBody, header, created.secret)).toBe(true);
    expect(verifyWebhookSignature(first!.body, header, created.secret)).toBe(true);
    expect(verifyWebhookSignature(`${first!.body} `, header, created.secret)).toBe(false);
    expect(verifyWebhookSignature(first!.rawBody, header, 'whsec_wrong')).toBe(false);
    expect(verifyWebhookSignature(first!.rawBody, header, created.secret, { now: Date.now() + 301_000 })).toBe(false);

    const rotated = await cg.rotateWebhookSecret(created.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previousSecretExpiresAt).toEqual(expect.any(String));
    const again = await cg.testWebhookEndpoint(created.id);
    const [second] = await rx.waitForRequests(1, { filter: (r) => r.headers['x-svc-event-id'] === again.eventId });
    const rotatedHeader = second!.headers['x-svc-signature'] as string;
    expect(rotatedHeader.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhookSignature(second!.rawBody, rotatedHeader, rotated.secret)).toBe(true);
    expect(verifyWebhookSignature(second!.rawBody, rotatedHeader, created.secret)).toBe(true);
    expect(verifyWebhookSignature(second!.rawBody, rotatedHeader, ['whsec_wrong', rotated.secret])).toBe(true);

    const deliveries = await eventually(async () => {
      const page = await cg.listWebhookDeliveries(created.id);
      const tests = page.deliveries.filter((d) => d.eventType === 'webhook.test');
      return tests.length === 2 && tests.every((d) => d.status === 'succeeded') && page;
    });
    const redelivered = await cg.redeliverWebhookDelivery(created.id, deliveries.deliveries[0]!.id);
    expect(redelivered).toMatchObject({ queued: true, eventId: deliveries.deliveries[0]!.eventId });

    await cg.deleteWebhookEndpoint(created.id);
    await expect(cg.getWebhookEndpoint(created.id)).rejects.toMatchObject({
      status: 404,
      error: 'webhook_endpoint_not_found',
    });
  });

  it('covers every operation and event type of the document the running service serves', async () => {
    const served = (await (await fetch(`${svc.url}/openapi.json`)).json()) as OpenApiDocument;
    const { operations, missing } = uncovered(served);
    expect(operations).toBeGreaterThanOrEqual(58);
    expect(Object.keys(served.paths).filter((p) => p.startsWith('/admin/')).length).toBeGreaterThan(0);
    expect(missing, 'operations, lists or events the client misses').toEqual([]);
  });

  it('takes per-request options: headers, a timeout, and a signal that aborts the call and its retries', async () => {
    // Headers: the client's and the call's (the call's win), never in place of the credential.
    const cg = client(tenant.sandboxKey, { headers: { 'x-request-id': 'client-wide', 'x-api-key': 'ak_test_nope' } });
    const err = await failure(cg.getMessage('no-such-message'));
    expect(err).toMatchObject({ status: 404, requestId: 'client-wide' }); // authenticated: our key went
    const own = await failure(cg.getMessage('no-such-message', { headers: { 'x-request-id': 'this-call-1' } }));
    expect(own.requestId).toBe('this-call-1');

    // A timeout for this call only, against a server that never answers.
    const silent = await startReceiver();
    try {
      silent.hangNext(1);
      const slow = client(tenant.key, { baseUrl: silent.url, timeoutMs: 60_000, retries: 0 });
      const timedOut = await failure(slow.getUsage({}, { timeoutMs: 300 }));
      expect(timedOut).toMatchObject({ status: 0, error: 'timeout' });
      expect(timedOut.message).toMatch(/^timeout: no answer within 300 ms \(GET http:\/\/127\.0\.0\.1:\d+\/usage\)$/);

      // A signal: aborted while the request waits for its answer, then before it is sent at all.
      silent.hangNext(1);
      const controller = new AbortController();
      const pending = failure(slow.getUsage({}, { signal: controller.signal }));
      await silent.waitForRequests(2);
      controller.abort(new Error('user gave up'));
      const aborted = await pending;
      expect(aborted).toMatchObject({ status: 0, error: 'aborted' });
      expect((aborted.cause as Error).message).toBe('user gave up');
      const before = silent.requests.length;
      await expect(slow.getUsage({}, { signal: AbortSignal.abort() })).rejects.toMatchObject({ error: 'aborted' });
      expect(silent.requests.length).toBe(before);
    } finally {
      await silent.close();
    }

    // Aborted during the wait between two retries: no further attempt, at once.
    let attempts = 0;
    const refusing: typeof fetch = () => {
      attempts++;
      return Promise.reject(new TypeError('fetch failed'));
    };
    const patient = client(tenant.key, { fetch: refusing, retries: 5, retryDelayMs: 60_000 });
    const controller = new AbortController();
    const waiting = failure(patient.getUsage({}, { signal: controller.signal }));
    await eventually(async () => attempts === 1);
    const t0 = Date.now();
    controller.abort();
    expect(await waiting).toMatchObject({ error: 'aborted' });
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(attempts).toBe(1);
  });

  it('gives every list as an async iterator, paged lists page by page', async () => {
    const own = await createTenant(svc.url, { plan: 'pro' });
    const cg = client(own.key);
    const phones = ['+15551230301', '+15551230302', '+15551230303'];
    for (const phone of phones) await cg.addSuppression(own.accountId, { phone });
    const suppressed = [];
    for await (const s of cg.iterateSuppressions(own.accountId, { limit: 1 })) suppressed.push(s.phone);
    expect(suppressed.sort()).toEqual(phones);

    const ids = [];
    for (const n of [1, 2]) {
      const ack = await cg.sendBroadcast({
        externalId: `iterate-${n}`,
        name: `Iterate ${n}`,
        content: { type: 'text', text: 'To all' },
        recipients: [{ phoneE164: '+15551230310' }],
      });
      ids.push(ack.broadcastId);
    }
    const broadcasts = [];
    for await (const b of cg.iterateBroadcasts({ limit: 1 })) broadcasts.push(b.broadcastId);
    expect(broadcasts.sort()).toEqual(ids.sort());

    const op = new ChatGateOperator({ adminToken: ADMIN_TOKEN, baseUrl: svc.url, fetch: checkedFetch });
    for (const n of [1, 2, 3])
      await op.ingestInboundMessage(own.accountId, {
        providerMessageId: `wamid.iterate-${n}`,
        from: '+15551230320',
        text: `m${n}`,
      });
    const texts = await eventually(async () => {
      const all = [];
      for await (const m of cg.iterateInboundMessages({ limit: 2 })) all.push(m.text);
      return all.length === 3 && all;
    });
    expect(texts.sort()).toEqual(['m1', 'm2', 'm3']);

    const endpoint = await cg.createWebhookEndpoint({ url: `${rx.url}/iterate` });
    for (let i = 0; i < 2; i++) await cg.testWebhookEndpoint(endpoint.id);
    const deliveries = await eventually(async () => {
      const all = [];
      for await (const d of cg.iterateWebhookDeliveries(endpoint.id, { limit: 1 })) all.push(d.eventType);
      return all.length === 2 && all;
    });
    expect(deliveries).toEqual(['webhook.test', 'webhook.test']);

    const rule = await cg.createForwardingRule({
      name: 'iterate',
      condition: { type: 'contains', pattern: 'x' },
      destination: { type: 'http', url: `${rx.url}/forward` },
    });
    const collect = async <T>(items: AsyncIterable<T>) => {
      const all: T[] = [];
      for await (const item of items) all.push(item);
      return all;
    };
    expect((await collect(cg.iterateChatAccounts())).map((a) => a.id)).toEqual([own.accountId]);
    expect((await collect(cg.iterateWebhookEndpoints())).map((e) => e.id)).toEqual([endpoint.id]);
    expect((await collect(cg.iterateForwardingRules())).map((r) => r.id)).toEqual([rule.id]);
    // Templates are read live from the provider, which nothing plays here: the iterator ends with
    // the list call's error, as the list call would.
    await expect(collect(cg.iterateTemplates(own.accountId))).rejects.toBeInstanceOf(ChatGateError);
  });
});

type Operation = { operationId: string; responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> };
type Schema = { $ref?: string; properties?: Record<string, unknown> };
type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, unknown>;
  components: { schemas: Record<string, Schema> };
};

const methodsOf = (cls: { prototype: object }) =>
  new Set(Object.getOwnPropertyNames(cls.prototype).filter((n) => n !== 'constructor'));

/**
 * What the client misses of a document: an operation without its method (the operator API's on
 * ChatGateOperator, the others on ChatGate), a list without its iterator (`listX` → `iterateX`; a
 * paged answer, one with `nextCursor`, must be a `listX`), an event type without its place in
 * WEBHOOK_EVENT_TYPES (and so in the WebhookEvent union, derived from the same section).
 */
function uncovered(doc: OpenApiDocument) {
  const clients = { public: methodsOf(ChatGate), operator: methodsOf(ChatGateOperator) };
  const missing: string[] = [];
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      operations++;
      const methods = path.startsWith('/admin/') ? clients.operator : clients.public;
      const id = op.operationId;
      if (!methods.has(id)) missing.push(`${method.toUpperCase()} ${path}: method ${id}`);
      if (id.startsWith('list') && !methods.has(`iterate${id.slice(4)}`))
        missing.push(`${method.toUpperCase()} ${path}: iterator iterate${id.slice(4)}`);
      const ref = op.responses?.['200']?.content?.['application/json']?.schema?.$ref;
      const answer = ref ? doc.components.schemas[ref.split('/').pop()!] : undefined;
      if (answer?.properties && 'nextCursor' in answer.properties && !id.startsWith('list'))
        missing.push(`${method.toUpperCase()} ${path}: a paged list not named list…`);
    }
  for (const type of Object.keys(doc.webhooks))
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) missing.push(`event ${type}`);
  return { operations, missing };
}

describe('@chatgate/client covers the OpenAPI document', () => {
  // The committed document (npm run client:check, in CI, fails when it differs from the routes);
  // the served one is checked too, in the suite above.
  const doc = JSON.parse(fs.readFileSync('packages/client/openapi.json', 'utf8')) as OpenApiDocument;

  it('has a method for every operationId (the operator API on ChatGateOperator) and an iterator for every list', () => {
    const { operations, missing } = uncovered(doc);
    expect(operations).toBeGreaterThanOrEqual(58);
    expect(missing, 'operations, lists or events the client misses').toEqual([]);
  });

  it('notices what it misses: an operation, a list iterator, an event type', () => {
    const extra = structuredClone(doc);
    extra.paths['/admin/new-thing'] = { get: { operationId: 'listNewThings' } };
    extra.paths['/new-thing'] = { post: { operationId: 'makeNewThing' } };
    extra.webhooks['thing.happened'] = {};
    expect(uncovered(extra).missing).toEqual([
      'GET /admin/new-thing: method listNewThings',
      'GET /admin/new-thing: iterator iterateNewThings',
      'POST /new-thing: method makeNewThing',
      'event thing.happened',
    ]);
  });

  it('lists every event type of the document and of the service (src/shared/vocab.ts, the one list the service sends from)', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual(Object.keys(doc.webhooks).sort());
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...EVENT_TYPES].sort());
  });
});

describe('verifyWebhookSignature', () => {
  const secret = 'whsec_test';
  const body = '{"eventId":"evt_1","type":"webhook.test","createdAt":"2026-01-01T00:00:00.000Z","data":{}}';
  const sign = (t: number, key = secret) => crypto.createHmac('sha256', key).update(`${t}.${body}`).digest('hex');
  const now = Date.UTC(2026, 0, 1) + 1000;
  const t = Math.floor(now / 1000);

  it('accepts any matching v1 within 300 seconds and refuses everything else', () => {
    expect(verifyWebhookSignature(body, `t=${t},v1=${sign(t)}`, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, `t=${t}, v1=${sign(t, 'old')}, v1=${sign(t)}`, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, `t=${t - 300},v1=${sign(t - 300)}`, secret, { now })).toBe(true);
    expect(verifyWebhookSignature(body, `t=${t - 301},v1=${sign(t - 301)}`, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, `t=${t + 301},v1=${sign(t + 301)}`, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, `v1=${sign(t)}`, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, `t=${t},v1=${sign(t).toUpperCase()}`, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, `t=${t},v1=${sign(t).slice(2)}`, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, undefined, secret, { now })).toBe(false);
    expect(verifyWebhookSignature(body, '', secret, { now })).toBe(false);
    expect(verifyWebhookSignature(Buffer.from(body), `t=${t},v1=${sign(t)}`, [secret], { now })).toBe(true);
  });
});
