// Outgoing webhooks end to end, against real HTTP receivers on loopback: endpoint management and
// its errors, the signed envelope of message.status events, retries (5xx, 4xx, redirects,
// timeouts) with the same eventId and body, who gets nothing, the test event, the delivery
// history and its pages, redelivery, secret rotation, the URL guard (every spelling of a private
// address, names resolving to one, DNS rebinding at delivery time) and a deliverer crash.
import crypto from 'node:crypto';
import net from 'node:net';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp } from '../src/app.js';
import { envelopeJson } from '../src/events/outbox.js';
import { writeEvents } from '../src/lifecycle/write-events.js';
import type { Resolve } from '../src/outbound/outbound-client.js';
import { EVENT_TYPES } from '../src/shared/vocab.js';
import { verifyWebhookSignature } from '../src/webhooks/signature.js';
import {
  call,
  createKey,
  createTenant,
  createTestDatabase,
  eventually,
  type Service,
  startService,
  testConfig,
  type TestDatabase,
  textMessage,
} from './support/harness.js';
import { type ReceivedRequest, type Receiver, startReceiver } from './support/receiver.js';

type Tenant = Awaited<ReturnType<typeof createTenant>>;

const ENV = { UNSAFE_ALLOW_PRIVATE_URLS: 'true', WORKER_POLL_MS: '50' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EVT_ID = /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9_-]{32,}$/;
const ALL_EVENTS = ['message.inbound', 'message.status', 'sender.first_inbound', 'webhook.test'];
/** Every subscribable type: the spec's (the default) and the opt-in ones added beyond it. */
const SUBSCRIBABLE = [...ALL_EVENTS, ...EVENT_TYPES.filter((e) => !ALL_EVENTS.includes(e))].sort();
const ENDPOINT_KEYS = [
  'createdAt',
  'description',
  'events',
  'id',
  'isActive',
  'lastFailureAt',
  'lastFailureReason',
  'lastSuccessAt',
  'updatedAt',
  'url',
];
const DELIVERY_KEYS = [
  'attemptCount',
  'attempts',
  'completedAt',
  'createdAt',
  'eventId',
  'eventType',
  'id',
  'lastStatusCode',
  'nextAttemptAt',
  'status',
];
const ATTEMPT_KEYS = ['attemptedAt', 'durationMs', 'error', 'responseBody', 'statusCode'];
const NOT_FOUND = { error: 'webhook_endpoint_not_found' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until every delivery of these endpoints is in a final state (no `pending` row, so none in
 * flight and none due later): the deliverer has decided everything it will ever send them, and
 * only claims pending rows, so a receiver's count read afterwards is final.
 */
async function deliveriesSettled(db: TestDatabase['db'], endpointIds: string[]): Promise<void> {
  await eventually(async () => {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ANY($1::uuid[]) AND status = 'pending'`,
      [endpointIds],
    );
    return row!.n === 0;
  });
}
const sorted = (a: readonly string[]) => [...a].sort();
const withoutSecret = (e: Record<string, unknown>) => {
  const { secret: _secret, previousSecretExpiresAt: _p, ...rest } = e;
  return rest;
};

/** The receiver's own HMAC-SHA256 over `<t>.<raw body bytes>`: independent of src/webhooks/signature.ts. */
const hmacHex = (secret: string, t: string, raw: Buffer) =>
  crypto
    .createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`, 'utf8'), raw]))
    .digest('hex');

/** Parses `t=<unix>,v1=<hex>[,v1=<hex>]`, asserting its exact form. */
function parseSignature(header: unknown): { t: string; v1: string[] } {
  expect(header).toMatch(/^t=\d{10},v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})*$/);
  const parts = String(header)
    .split(',')
    .map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)] as const);
  return { t: parts.find(([k]) => k === 't')![1], v1: parts.filter(([k]) => k === 'v1').map(([, v]) => v) };
}

/** What a careful receiver checks on every request, for the endpoint's `secret`; returns the parsed body. */
function checkSignedEnvelope(r: ReceivedRequest, secret: string): any {
  expect(r.method).toBe('POST');
  expect(r.headers['content-type']).toBe('application/json');
  const body = JSON.parse(r.body);
  expect(sorted(Object.keys(body))).toEqual(['createdAt', 'data', 'eventId', 'type']);
  expect(body.eventId).toMatch(EVT_ID);
  expect(body.createdAt).toMatch(ISO);
  expect(r.headers['x-svc-event']).toBe(body.type);
  expect(r.headers['x-svc-event-id']).toBe(body.eventId);
  const { t, v1 } = parseSignature(r.headers['x-svc-signature']);
  expect(Math.abs(Math.floor(r.at / 1000) - Number(t))).toBeLessThanOrEqual(5);
  expect(v1).toContain(hmacHex(secret, t, r.rawBody));
  expect(v1).not.toContain(hmacHex(`${secret}x`, t, r.rawBody));
  expect(verifyWebhookSignature(r.rawBody, String(r.headers['x-svc-signature']), secret)).toBe(true);
  expect(verifyWebhookSignature(r.body, String(r.headers['x-svc-signature']), secret)).toBe(true);
  return body;
}

describe('webhooks', () => {
  let svc: Service;
  const receivers: Receiver[] = [];
  const newReceiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    svc = await startService({ env: ENV });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close(); // first: a hung request must not hold up the service's stop
    await svc?.stop();
  });

  const api = (key: string, method: string, path: string, body?: unknown) => call(svc.url, method, path, { key, body });
  async function createEndpoint(key: string, body: Record<string, unknown>): Promise<any> {
    const res = await api(key, 'POST', '/webhook-endpoints', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  }
  const getEndpoint = async (key: string, id: string) => {
    const res = await api(key, 'GET', `/webhook-endpoints/${id}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  async function deliveries(key: string, endpointId: string, query = ''): Promise<any[]> {
    const res = await api(key, 'GET', `/webhook-endpoints/${endpointId}/deliveries${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.deliveries;
  }
  const sendTest = async (key: string, endpointId: string): Promise<string> => {
    const res = await api(key, 'POST', `/webhook-endpoints/${endpointId}/test`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ eventId: expect.stringMatching(EVT_ID), queued: true });
    return res.body.eventId;
  };
  const sandboxSend = async (t: Tenant, externalId: string, phone: string) => {
    const res = await api(t.sandboxKey, 'POST', '/messages', {
      ...textMessage(externalId),
      to: { type: 'phone', phoneE164: phone },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.messageId as string;
  };
  const waitMessage = (t: Tenant, id: string, status: string) =>
    eventually(async () => {
      const m = (await api(t.sandboxKey, 'GET', `/messages/${id}`)).body;
      return m.status === status ? m : undefined;
    });
  const deliveryRows = async (endpointId: string) =>
    (
      await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1', [
        endpointId,
      ])
    )[0]!.n;

  describe('endpoint management', () => {
    it('creates endpoints (all event types by default) with the secret shown once; list and detail never show it', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const before = Date.now();
      const a = await createEndpoint(t.key, { url: 'https://hooks.example.com/a' });
      expect(sorted(Object.keys(a))).toEqual(sorted([...ENDPOINT_KEYS, 'secret']));
      expect(a).toMatchObject({
        url: 'https://hooks.example.com/a',
        description: '',
        isActive: true,
        lastSuccessAt: null,
        lastFailureAt: null,
        lastFailureReason: null,
      });
      expect(sorted(a.events)).toEqual(ALL_EVENTS);
      expect(a.id).toMatch(UUID);
      expect(a.secret).toMatch(SECRET);
      expect(a.createdAt).toMatch(ISO);
      expect(a.updatedAt).toBe(a.createdAt);
      expect(Date.parse(a.createdAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(a.createdAt)).toBeLessThanOrEqual(Date.now() + 1000);

      const b = await createEndpoint(t.key, {
        url: 'https://hooks.example.com/b',
        events: ['message.inbound'],
        description: 'CRM inbox',
      });
      expect(b).toMatchObject({ events: ['message.inbound'], description: 'CRM inbox', isActive: true });
      expect(b.secret).toMatch(SECRET);
      expect(b.secret).not.toBe(a.secret);

      const list = await api(t.key, 'GET', '/webhook-endpoints');
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ webhookEndpoints: [withoutSecret(a), withoutSecret(b)] });
      expect(JSON.stringify(list.body)).not.toMatch(/secret|whsec_/);
      for (const e of [a, b]) {
        const got = await getEndpoint(t.key, e.id);
        expect(got).toEqual(withoutSecret(e));
        expect(JSON.stringify(got)).not.toMatch(/secret|whsec_/);
      }
      // The stored secret is sealed, not kept in clear.
      const [row] = await svc.db.query<{ secret_enc: string }>(
        'SELECT secret_enc FROM webhook_endpoints WHERE id = $1',
        [a.id],
      );
      expect(row!.secret_enc).not.toContain(a.secret);
    });

    it('PATCH changes url, events, description and isActive, and answers without the secret', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const e = await createEndpoint(t.key, { url: 'https://hooks.example.com/p', description: 'first' });
      await sleep(5);
      const p1 = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, {
        description: 'second',
        events: ['sender.first_inbound', 'message.status'],
      });
      expect(p1.status).toBe(200);
      expect(sorted(Object.keys(p1.body))).toEqual(ENDPOINT_KEYS);
      expect(p1.body).toMatchObject({
        id: e.id,
        url: e.url,
        description: 'second',
        isActive: true,
        createdAt: e.createdAt,
      });
      expect(sorted(p1.body.events)).toEqual(['message.status', 'sender.first_inbound']);
      expect(Date.parse(p1.body.updatedAt)).toBeGreaterThan(Date.parse(e.updatedAt));

      const p2 = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, { url: 'https://other.example.com/x' });
      expect(p2.status).toBe(200);
      expect(p2.body).toMatchObject({ url: 'https://other.example.com/x', description: 'second' });
      expect(sorted(p2.body.events)).toEqual(['message.status', 'sender.first_inbound']);

      const p3 = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, { isActive: false });
      expect(p3.status).toBe(200);
      expect(p3.body.isActive).toBe(false);
      expect(await getEndpoint(t.key, e.id)).toEqual(p3.body);
      const p4 = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, { isActive: true });
      expect(p4.body.isActive).toBe(true);
      expect(JSON.stringify([p1.body, p2.body, p3.body, p4.body])).not.toMatch(/whsec_/);
    });

    it('subscribes to every event type of the spec, on create and PATCH, as the OpenAPI document says', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const all = await createEndpoint(t.key, { url: 'https://hooks.example.com/all', events: ALL_EVENTS });
      expect(sorted(all.events)).toEqual(ALL_EVENTS);
      const testOnly = await createEndpoint(t.key, { url: 'https://hooks.example.com/t', events: ['webhook.test'] });
      expect(testOnly.events).toEqual(['webhook.test']);
      const patched = await api(t.key, 'PATCH', `/webhook-endpoints/${testOnly.id}`, { events: ALL_EVENTS });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      expect(sorted(patched.body.events)).toEqual(ALL_EVENTS);
      expect(sorted((await getEndpoint(t.key, testOnly.id)).events)).toEqual(ALL_EVENTS);

      const doc = (await call(svc.url, 'GET', '/openapi.json')).body;
      for (const op of [doc.paths['/webhook-endpoints'].post, doc.paths['/webhook-endpoints/{id}'].patch]) {
        const events = op.requestBody.content['application/json'].schema.properties.events;
        expect(events.maxItems).toBe(SUBSCRIBABLE.length);
        expect(sorted(events.items.anyOf.flatMap((e: { enum: string[] }) => e.enum))).toEqual(SUBSCRIBABLE);
      }
    });

    it('refuses bad bodies with validation_error and bad URLs with invalid_webhook_url and a reason', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const url = 'https://hooks.example.com/v';
      const badBodies: unknown[] = [
        {},
        { url: '' },
        { url: 123 },
        { url, events: [] },
        { url, events: ['message.sent'] },
        { url, events: 'message.status' },
        { url, description: 'x'.repeat(501) },
        { url, secret: 'whsec_mine' },
        'not json',
      ];
      for (const body of badBodies) {
        const res = await api(t.key, 'POST', '/webhook-endpoints', body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(sorted(Object.keys(res.body))).toEqual(['details', 'error']);
        expect(res.body.error).toBe('validation_error');
        expect(res.body.details.length).toBeGreaterThan(0);
        for (const d of res.body.details) expect(d).toEqual({ path: expect.any(String), message: expect.any(String) });
      }
      expect((await api(t.key, 'POST', '/webhook-endpoints', {})).body.details).toContainEqual({
        path: 'url',
        message: expect.any(String),
      });

      const e = await createEndpoint(t.key, { url });
      for (const body of [
        { isActive: 'yes' },
        { events: [] },
        { url: 5 },
        { secret: 'whsec_x' },
        { description: 'x'.repeat(501) },
      ]) {
        const res = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error).toBe('validation_error');
      }

      const badUrls: [string, RegExp][] = [
        ['not a url', /valid URL/i],
        ['ftp://files.example.com/hook', /https/],
        ['javascript:alert(1)', /https/],
        ['https://user:pass@hooks.example.com/hook', /credential/],
        ['https://user@hooks.example.com/hook', /credential/],
        ['http://:pw@127.0.0.1:9/hook', /credential/],
      ];
      for (const [bad, reason] of badUrls) {
        const res = await api(t.key, 'POST', '/webhook-endpoints', { url: bad });
        expect(res.status, bad).toBe(400);
        expect(res.body, bad).toEqual({ error: 'invalid_webhook_url', reason: expect.stringMatching(reason) });
        const patched = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, { url: bad });
        expect(patched.status, bad).toBe(400);
        expect(patched.body, bad).toEqual({ error: 'invalid_webhook_url', reason: expect.stringMatching(reason) });
      }
      expect((await getEndpoint(t.key, e.id)).url).toBe(url);
      expect((await api(t.key, 'GET', '/webhook-endpoints')).body.webhookEndpoints).toHaveLength(1);
    });

    it('allows at most 5 active endpoints, on create and on reactivation, even under concurrent creates', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          api(t.key, 'POST', '/webhook-endpoints', { url: `https://hooks.example.com/${i}` }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body).toEqual({ error: 'limit_reached', message: expect.stringContaining('5') });
      }
      const ids = results.filter((r) => r.status === 201).map((r) => r.body.id as string);
      expect((await api(t.key, 'GET', '/webhook-endpoints')).body.webhookEndpoints).toHaveLength(5);

      const sixth = await api(t.key, 'POST', '/webhook-endpoints', { url: 'https://hooks.example.com/6' });
      expect(sixth.status).toBe(409);
      expect(sixth.body).toEqual({ error: 'limit_reached', message: expect.stringContaining('5') });
      // Re-asserting an already active endpoint does not count it twice.
      expect((await api(t.key, 'PATCH', `/webhook-endpoints/${ids[0]}`, { isActive: true })).status).toBe(200);

      expect((await api(t.key, 'PATCH', `/webhook-endpoints/${ids[0]}`, { isActive: false })).status).toBe(200);
      const replacement = await createEndpoint(t.key, { url: 'https://hooks.example.com/7' });
      const reactivate = await api(t.key, 'PATCH', `/webhook-endpoints/${ids[0]}`, { isActive: true });
      expect(reactivate.status).toBe(409);
      expect(reactivate.body).toEqual({ error: 'limit_reached', message: expect.stringContaining('5') });
      expect((await getEndpoint(t.key, ids[0]!)).isActive).toBe(false);
      // Inactive endpoints do not count: 6 exist, 5 active.
      expect((await api(t.key, 'GET', '/webhook-endpoints')).body.webhookEndpoints).toHaveLength(6);

      expect((await api(t.key, 'DELETE', `/webhook-endpoints/${replacement.id}`)).status).toBe(204);
      const again = await api(t.key, 'PATCH', `/webhook-endpoints/${ids[0]}`, { isActive: true });
      expect(again.status).toBe(200);
      expect(again.body.isActive).toBe(true);
    });

    it('answers 404 webhook_endpoint_not_found for unknown and foreign endpoints, and leaves foreign ones untouched', async () => {
      const owner = await createTenant(svc.url, { plan: 'pro' });
      const other = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(owner.key, { url: `${rx.url}/owner` });
      for (const id of [crypto.randomUUID(), e.id]) {
        const attempts: [string, string, unknown?][] = [
          ['GET', `/webhook-endpoints/${id}`],
          ['PATCH', `/webhook-endpoints/${id}`, { description: 'taken over', isActive: false }],
          ['POST', `/webhook-endpoints/${id}/rotate-secret`],
          ['POST', `/webhook-endpoints/${id}/test`],
          ['GET', `/webhook-endpoints/${id}/deliveries`],
          ['DELETE', `/webhook-endpoints/${id}`],
        ];
        for (const [method, path, body] of attempts) {
          const res = await api(other.key, method, path, body);
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(res.body, `${method} ${path}`).toEqual(NOT_FOUND);
        }
      }
      expect((await api(other.key, 'GET', '/webhook-endpoints')).body).toEqual({ webhookEndpoints: [] });
      expect(await getEndpoint(owner.key, e.id)).toEqual(withoutSecret(e));
      await deliveriesSettled(svc.db, [e.id]); // a foreign test event would be a pending row, then a request
      expect(await deliveryRows(e.id)).toBe(0);
      expect(rx.requests).toHaveLength(0);

      // Unknown deliveries, and a delivery of another endpoint of the same customer.
      await sendTest(owner.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(owner.key, e.id);
        return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
      });
      const sibling = await createEndpoint(owner.key, { url: `${rx.url}/sibling` });
      for (const path of [
        `/webhook-endpoints/${e.id}/deliveries/${crypto.randomUUID()}/redeliver`,
        `/webhook-endpoints/${sibling.id}/deliveries/${d.id}/redeliver`,
      ]) {
        const res = await api(owner.key, 'POST', path);
        expect(res.status, path).toBe(404);
        expect(res.body, path).toEqual({ error: 'webhook_delivery_not_found' });
      }
      // A malformed id is refused, never a 500.
      const malformed = await api(owner.key, 'GET', '/webhook-endpoints/not-a-uuid');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({
        error: 'validation_error',
        details: [{ path: 'id', message: expect.any(String) }],
      });
    });

    it('redeliver through an unknown or foreign endpoint id answers webhook_endpoint_not_found', async () => {
      const owner = await createTenant(svc.url, { plan: 'pro' });
      const other = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(owner.key, { url: `${rx.url}/r` });
      await sendTest(owner.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(owner.key, e.id);
        return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
      });
      for (const [key, endpointId] of [
        [other.key, e.id],
        [owner.key, crypto.randomUUID()],
      ] as const) {
        const res = await api(key, 'POST', `/webhook-endpoints/${endpointId}/deliveries/${d.id}/redeliver`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(NOT_FOUND);
      }
      await deliveriesSettled(svc.db, [e.id]); // a redelivery would have made it pending again
      expect(rx.requests).toHaveLength(1); // nothing was redelivered
    });

    it('refuses plans without webhooks (free, starter), keys scoped to one account, and missing or invalid keys', async () => {
      for (const plan of ['free', 'starter']) {
        const t = await createTenant(svc.url, { plan });
        const someId = crypto.randomUUID();
        for (const [method, path, body] of [
          ['POST', '/webhook-endpoints', { url: 'https://hooks.example.com/x' }],
          ['GET', '/webhook-endpoints'],
          ['GET', `/webhook-endpoints/${someId}`],
          ['POST', `/webhook-endpoints/${someId}/test`],
        ] as [string, string, unknown?][]) {
          const res = await api(t.key, method, path, body);
          expect(res.status, `${plan} ${method} ${path}`).toBe(403);
          expect(res.body).toEqual({ error: 'feature_not_available', plan });
        }
      }
      const basic = await createTenant(svc.url, { plan: 'basic' });
      await createEndpoint(basic.key, { url: 'https://hooks.example.com/basic' });

      const t = await createTenant(svc.url, { plan: 'pro' });
      const e = await createEndpoint(t.key, { url: 'https://hooks.example.com/scoped' });
      const scoped = await createKey(svc.url, t.customerId, { chatAccountId: t.accountId });
      const scopedSandbox = await createKey(svc.url, t.customerId, { chatAccountId: t.accountId, sandbox: true });
      for (const key of [scoped, scopedSandbox]) {
        for (const [method, path, body] of [
          ['POST', '/webhook-endpoints', { url: 'https://hooks.example.com/y' }],
          ['GET', '/webhook-endpoints'],
          ['GET', `/webhook-endpoints/${e.id}`],
          ['PATCH', `/webhook-endpoints/${e.id}`, { isActive: false }],
          ['POST', `/webhook-endpoints/${e.id}/rotate-secret`],
          ['POST', `/webhook-endpoints/${e.id}/test`],
          ['GET', `/webhook-endpoints/${e.id}/deliveries`],
          ['POST', `/webhook-endpoints/${e.id}/deliveries/${crypto.randomUUID()}/redeliver`],
          ['DELETE', `/webhook-endpoints/${e.id}`],
        ] as [string, string, unknown?][]) {
          const res = await api(key, method, path, body);
          expect(res.status, `${method} ${path}`).toBe(403);
          expect(res.body).toEqual({ error: 'key_scope_insufficient' });
        }
      }
      expect(await getEndpoint(t.key, e.id)).toEqual(withoutSecret(e));
      expect((await api(t.key, 'GET', '/webhook-endpoints')).body.webhookEndpoints).toHaveLength(1);
      expect(await deliveryRows(e.id)).toBe(0);

      const none = await call(svc.url, 'GET', '/webhook-endpoints');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ error: 'Missing x-api-key header', message: expect.stringContaining('x-api-key') });
      const invalid = await api('ak_live_not-a-real-key', 'GET', '/webhook-endpoints');
      expect(invalid.status).toBe(401);
      expect(invalid.body).toEqual({ error: 'Invalid API key', message: expect.stringContaining('revoked') });
    });

    it('DELETE answers 204, removes the endpoint with its delivery history, and nothing reaches it afterwards', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/gone` });
      await sendTest(t.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
      });
      const attemptRows = async () =>
        (
          await svc.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM webhook_attempt_history WHERE delivery_id = $1',
            [d.id],
          )
        )[0]!.n;
      expect(await attemptRows()).toBe(1);

      const del = await api(t.key, 'DELETE', `/webhook-endpoints/${e.id}`);
      expect(del.status).toBe(204);
      expect(del.body).toBeNull();
      expect((await api(t.key, 'GET', `/webhook-endpoints/${e.id}`)).body).toEqual(NOT_FOUND);
      expect((await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries`)).status).toBe(404);
      expect((await api(t.key, 'DELETE', `/webhook-endpoints/${e.id}`)).status).toBe(404);
      expect((await api(t.key, 'GET', '/webhook-endpoints')).body).toEqual({ webhookEndpoints: [] });
      expect(await deliveryRows(e.id)).toBe(0);
      expect(await attemptRows()).toBe(0);

      const id = await sandboxSend(t, 'after-delete', '+15551234588');
      await waitMessage(t, id, 'read');
      await deliveriesSettled(svc.db, [e.id]); // status events write their deliveries in the status change's transaction
      expect(rx.requests).toHaveLength(1);
    });
  });

  describe('delivery', () => {
    it('delivers message.status events of a sandbox send, signed, with the exact envelope (plan basic)', async () => {
      const t = await createTenant(svc.url, { plan: 'basic' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/status`, events: ['message.status'] });
      const id = await sandboxSend(t, 'wh-88', '+15551234588');
      const m = await waitMessage(t, id, 'read');
      const got = await rx.waitForRequests(3);
      await deliveriesSettled(svc.db, [e.id]);
      expect(rx.requests).toHaveLength(3);

      const bodies = got.map((r) => {
        expect(r.path).toBe('/status');
        expect(r.headers['x-svc-event']).toBe('message.status');
        // Tampering with one byte, or another secret, breaks the signature.
        const sig = String(r.headers['x-svc-signature']);
        expect(
          verifyWebhookSignature(
            r.body.replace(
              id,
              id.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
            ),
            sig,
            e.secret,
          ),
        ).toBe(false);
        expect(verifyWebhookSignature(r.rawBody, sig, `whsec_${'A'.repeat(43)}`)).toBe(false);
        return checkSignedEnvelope(r, e.secret);
      });
      const byStatus = new Map(bodies.map((b) => [b.data.status as string, b]));
      expect(sorted([...byStatus.keys()])).toEqual(['delivered', 'read', 'sent']);
      expect(new Set(bodies.map((b) => b.eventId)).size).toBe(3);
      const expected = {
        sent: ['queued', m.sentAt],
        delivered: ['sent', m.deliveredAt],
        read: ['delivered', m.readAt],
      } as const;
      for (const [status, [previousStatus, timestamp]] of Object.entries(expected)) {
        const b = byStatus.get(status)!;
        expect(b.type).toBe('message.status');
        expect(b.data).toEqual({
          messageId: id,
          externalId: 'wh-88',
          status,
          previousStatus,
          channel: 'chat_official',
          recipient: '+15551234588',
          chatAccountId: t.accountId,
          timestamp,
          error: null,
        });
      }
      // The body is the stored event, exactly.
      const rows = await svc.db.query<{ id: string; type: string; data: unknown; created_at: Date }>(
        'SELECT id, type, data, created_at FROM events WHERE id = ANY($1::text[])',
        [bodies.map((b) => b.eventId)],
      );
      expect(rows).toHaveLength(3);
      for (const row of rows)
        expect(bodies.find((b) => b.eventId === row.id)).toEqual(
          JSON.parse(envelopeJson(row.id, row.type, row.created_at, row.data)),
        );

      const history = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list.length === 3 && list.every((d) => d.status === 'succeeded') ? list : undefined;
      });
      expect(sorted(history.map((d) => d.eventId))).toEqual(sorted(bodies.map((b) => b.eventId)));
      for (const d of history) {
        expect(sorted(Object.keys(d))).toEqual(DELIVERY_KEYS);
        expect(d).toMatchObject({
          eventType: 'message.status',
          attemptCount: 1,
          lastStatusCode: 200,
          nextAttemptAt: null,
        });
        expect(d.createdAt).toMatch(ISO);
        expect(d.completedAt).toMatch(ISO);
        expect(d.attempts).toHaveLength(1);
        expect(sorted(Object.keys(d.attempts[0]))).toEqual(ATTEMPT_KEYS);
        // The receiver is on loopback (UNSAFE_ALLOW_PRIVATE_URLS): what a private address answers
        // is never kept nor shown, only its status.
        expect(d.attempts[0]).toMatchObject({ statusCode: 200, responseBody: null, error: null });
      }
      // A first try is kept in the delivery's own row, not as a history row (decision 0057).
      const [stored] = await svc.db.query<{ rows: number; firsts: number }>(
        `SELECT (SELECT count(*)::int FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[])) AS rows,
                (SELECT count(*)::int FROM webhook_deliveries WHERE id = ANY($1::uuid[]) AND first_status_code = 200) AS firsts`,
        [history.map((d) => d.id)],
      );
      expect(stored).toEqual({ rows: 0, firsts: 3 });
      const after = await getEndpoint(t.key, e.id);
      expect(after.lastSuccessAt).toMatch(ISO);
      expect(after).toMatchObject({ lastFailureAt: null, lastFailureReason: null });
    });

    it('delivery history timestamps are ISO 8601 UTC like every other timestamp of the API', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/ts` });
      const before = Date.now();
      await sendTest(t.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list.length === 1 && list[0].status === 'succeeded' ? list : undefined;
      });
      expect(d.attempts[0].attemptedAt).toMatch(ISO);
      // The real time of the attempt, by ordering: after the event was queued, and not after the
      // receiver got the request (the attempt starts before its POST).
      expect(Date.parse(d.attempts[0].attemptedAt)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(d.attempts[0].attemptedAt)).toBeLessThanOrEqual(rx.requests[0]!.at);
    });

    it('retries a 5xx or 4xx answer with the same eventId and body on the backoff schedule, and records every attempt', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      rx.enqueue({ status: 500, body: 'boom' }, { status: 410, body: 'gone' }, { status: 503, body: 'later' });
      rx.respond({ status: 200, body: 'thanks' });
      const e = await createEndpoint(t.key, { url: `${rx.url}/flaky` });
      const eventId = await sendTest(t.key, e.id);

      // After three failures: pending, next attempt announced, the failure recorded on the endpoint.
      const pending = await eventually(
        async () => {
          const [d] = await deliveries(t.key, e.id);
          // Three attempts recorded (an attempt counts as it starts: attemptCount 3 alone may be the third on the wire).
          return d && d.attemptCount === 3 && d.status === 'pending' && d.attempts.length === 3 ? d : undefined;
        },
        10_000,
        20,
      );
      const seenPendingAt = Date.now(); // after the third attempt's result was recorded
      expect(pending.nextAttemptAt).toMatch(ISO);
      expect(pending.completedAt).toBeNull();
      expect(pending.lastStatusCode).toBe(503);
      const failing = await getEndpoint(t.key, e.id);
      expect(failing).toMatchObject({ lastSuccessAt: null, lastFailureReason: 'HTTP 503' });
      expect(failing.lastFailureAt).toMatch(ISO);

      const got = await rx.waitForRequests(4);
      await deliveriesSettled(svc.db, [e.id]);
      expect(rx.requests).toHaveLength(4);
      for (const r of got) {
        expect(r.headers['x-svc-event-id']).toBe(eventId);
        expect(r.body).toBe(got[0]!.body);
        checkSignedEnvelope(r, e.secret);
      }
      // 30 s, 2 min, 8 min × RETRY_TIME_SCALE 0.001, ±20 % jitter: lower bounds on the gaps the
      // receiver saw (a slow machine only lengthens them).
      const gaps = got.slice(1).map((r, i) => r.at - got[i]!.at);
      expect(gaps[0]).toBeGreaterThanOrEqual(20);
      expect(gaps[1]).toBeGreaterThanOrEqual(90);
      expect(gaps[2]).toBeGreaterThanOrEqual(370);
      // The upper bound on the schedule, without timing this process: the fourth attempt was
      // scheduled at most 8 min × 0.001 × 1.2 after the third's result was recorded, which was
      // before we read it as pending (a slow machine only makes this easier, never fails it).
      expect(Date.parse(pending.nextAttemptAt) - seenPendingAt).toBeLessThanOrEqual(Math.ceil(480 * 1.2));

      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(d).toMatchObject({
        eventId,
        eventType: 'webhook.test',
        status: 'succeeded',
        attemptCount: 4,
        lastStatusCode: 200,
        nextAttemptAt: null,
      });
      expect(d.completedAt).toMatch(ISO);
      expect(d.attempts.map((a: any) => [a.statusCode, a.responseBody, a.error])).toEqual([
        [500, null, null],
        [410, null, null],
        [503, null, null],
        [200, null, null],
      ]);
      for (const a of d.attempts) expect(a.durationMs).toBeGreaterThanOrEqual(0);
      // The first try in the delivery's row, the three later ones in webhook_attempts (decision 0057).
      const [stored] = await svc.db.query<{ first: number | null; later: number[] }>(
        `SELECT d.first_status_code AS first,
                (SELECT array_agg(a.status_code ORDER BY a.id) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS later
           FROM webhook_deliveries d WHERE d.id = $1`,
        [d.id],
      );
      expect(stored).toEqual({ first: 500, later: [410, 503, 200] });
      const done = await getEndpoint(t.key, e.id);
      expect(done.lastFailureReason).toBe('HTTP 503');
      expect(Date.parse(done.lastSuccessAt)).toBeGreaterThan(Date.parse(done.lastFailureAt));
    });

    it('does not follow redirects: a 302 or 307 is a failure, retried to the same URL', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const elsewhere = await newReceiver();
      rx.redirectNext(`${elsewhere.url}/moved`, 302);
      rx.redirectNext(`${elsewhere.url}/moved`, 307);
      rx.respond({ status: 204 });
      const e = await createEndpoint(t.key, { url: `${rx.url}/redirecting` });
      const eventId = await sendTest(t.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(d).toMatchObject({ eventId, attemptCount: 3, lastStatusCode: 204 });
      expect(d.attempts.map((a: any) => a.statusCode)).toEqual([302, 307, 204]);
      expect(rx.requests.map((r) => [r.path, r.headers['x-svc-event-id']])).toEqual([
        ['/redirecting', eventId],
        ['/redirecting', eventId],
        ['/redirecting', eventId],
      ]);
      expect(new Set(rx.requests.map((r) => r.body)).size).toBe(1);
      expect(elsewhere.requests).toHaveLength(0);
      expect(elsewhere.connections).toBe(0);
      expect(await getEndpoint(t.key, e.id)).toMatchObject({
        lastFailureReason: 'HTTP 307 (redirects are not followed)',
        lastSuccessAt: expect.stringMatching(ISO),
      });
    });

    it('a receiver that never answers: the attempt times out after 10 s and is retried with the same event', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      rx.hangNext(1);
      const e = await createEndpoint(t.key, { url: `${rx.url}/slow` });
      const eventId = await sendTest(t.key, e.id);
      const got = await rx.waitForRequests(2, { timeoutMs: 20_000 });
      expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(9_900);
      expect(got.map((r) => r.headers['x-svc-event-id'])).toEqual([eventId, eventId]);
      expect(got[1]!.body).toBe(got[0]!.body);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(d).toMatchObject({ attemptCount: 2, lastStatusCode: 200 });
      expect(d.attempts[0]).toMatchObject({ statusCode: null, error: 'timeout after 10000 ms' });
      expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(9_900);
      // Ordering instead of an upper bound in this process's clock, both times from the service's
      // own records: the attempt was given up (the receiver never answers) before the retry began.
      expect(Date.parse(d.attempts[0].attemptedAt) + d.attempts[0].durationMs).toBeLessThanOrEqual(
        Date.parse(d.attempts[1].attemptedAt),
      );
      expect(d.attempts[1]).toMatchObject({ statusCode: 200, error: null });
      const after = await getEndpoint(t.key, e.id);
      expect(after.lastFailureReason).toBe('timeout after 10000 ms');
      expect(Date.parse(after.lastSuccessAt)).toBeGreaterThan(Date.parse(after.lastFailureAt));
    }, 40_000);

    it('sends nothing to inactive endpoints, unsubscribed types, other customers, or plans without webhooks', async () => {
      const rx = await newReceiver();
      const t = await createTenant(svc.url, { plan: 'pro' });
      const other = await createTenant(svc.url, { plan: 'pro' });
      const downgraded = await createTenant(svc.url, { plan: 'pro' });
      const status = await createEndpoint(t.key, { url: `${rx.url}/status`, events: ['message.status'] });
      const inbound = await createEndpoint(t.key, {
        url: `${rx.url}/inbound`,
        events: ['message.inbound', 'sender.first_inbound'],
      });
      const inactive = await createEndpoint(t.key, { url: `${rx.url}/inactive` });
      expect((await api(t.key, 'PATCH', `/webhook-endpoints/${inactive.id}`, { isActive: false })).status).toBe(200);
      const foreign = await createEndpoint(other.key, { url: `${rx.url}/foreign` });
      const gated = await createEndpoint(downgraded.key, { url: `${rx.url}/gated` });
      const patched = await call(svc.url, 'PATCH', `/admin/customers/${downgraded.customerId}`, {
        admin: true,
        body: { plan: 'starter' },
      });
      expect(patched.status).toBe(200);

      const id = await sandboxSend(t, 'only-status', '+15551234588');
      const gatedId = await sandboxSend(downgraded, 'gated', '+15551234588');
      await waitMessage(t, id, 'read');
      await waitMessage(downgraded, gatedId, 'read');
      await rx.waitForRequests(3);
      await deliveriesSettled(
        svc.db,
        [status, inbound, inactive, foreign, gated].map((e) => e.id),
      );
      expect(rx.requests.map((r) => r.path)).toEqual(['/status', '/status', '/status']);
      for (const e of [inbound, inactive, foreign, gated]) expect(await deliveryRows(e.id)).toBe(0);
      // The downgraded customer's events exist; they are just not delivered.
      const events = await svc.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE data->>'messageId' = $1`,
        [gatedId],
      );
      expect(events[0]!.n).toBe(3);
      expect(await deliveryRows(status.id)).toBe(3);

      // Reactivated, the endpoint gets the next events (so it was inactivity that kept it quiet).
      expect((await api(t.key, 'PATCH', `/webhook-endpoints/${inactive.id}`, { isActive: true })).status).toBe(200);
      const id2 = await sandboxSend(t, 'after-reactivation', '+15551234500');
      await waitMessage(t, id2, 'delivered');
      await rx.waitForRequests(2, { filter: (r) => r.path === '/inactive' });
      checkSignedEnvelope(
        rx.requests.find((r) => r.path === '/inactive')!,
        inactive.secret,
      );
    });

    it('the test event goes to that endpoint only, with data {webhookEndpointId, message}', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const a = await createEndpoint(t.key, { url: `${rx.url}/a`, events: ['message.status'] });
      const b = await createEndpoint(t.key, { url: `${rx.url}/b`, events: ['message.inbound'] });
      const eventId = await sendTest(t.key, b.id);
      const [r] = await rx.waitForRequests(1);
      await deliveriesSettled(svc.db, [a.id, b.id]);
      expect(rx.requests).toHaveLength(1);
      expect(r!.path).toBe('/b');
      const body = checkSignedEnvelope(r!, b.secret);
      expect(body).toEqual({
        eventId,
        type: 'webhook.test',
        createdAt: expect.stringMatching(ISO),
        data: { webhookEndpointId: b.id, message: expect.any(String) },
      });
      expect(body.data.message.length).toBeGreaterThan(0);
      expect(await deliveryRows(a.id)).toBe(0);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, b.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(d).toMatchObject({ eventId, eventType: 'webhook.test', attemptCount: 1 });
    });

    it('a webhook.test subscription brings no other endpoint’s test events, of this customer or another', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const other = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const subscribed = await createEndpoint(t.key, { url: `${rx.url}/subscribed`, events: ['webhook.test'] });
      const everything = await createEndpoint(t.key, { url: `${rx.url}/everything` });
      expect(everything.events).toContain('webhook.test');
      const foreign = await createEndpoint(other.key, { url: `${rx.url}/foreign`, events: ['webhook.test'] });

      const eventId = await sendTest(t.key, everything.id);
      const [r] = await rx.waitForRequests(1);
      await deliveriesSettled(svc.db, [subscribed.id, everything.id, foreign.id]);
      expect(rx.requests.map((x) => x.path)).toEqual(['/everything']);
      expect(checkSignedEnvelope(r!, everything.secret)).toMatchObject({
        eventId,
        type: 'webhook.test',
        data: { webhookEndpointId: everything.id },
      });
      const foreignId = await sendTest(other.key, foreign.id);
      await rx.waitForRequests(2);
      await deliveriesSettled(svc.db, [subscribed.id, everything.id, foreign.id]);
      expect(rx.requests.map((x) => [x.path, x.headers['x-svc-event-id']])).toEqual([
        ['/everything', eventId],
        ['/foreign', foreignId],
      ]);
      expect(await deliveryRows(subscribed.id)).toBe(0);
      expect(await deliveryRows(everything.id)).toBe(1);
      expect(await deliveryRows(foreign.id)).toBe(1);
    });

    it('pages through the delivery history, newest first, with a cursor', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/paged` });
      const eventIds: string[] = [];
      for (let i = 0; i < 5; i++) eventIds.push(await sendTest(t.key, e.id));
      await rx.waitForRequests(5);

      const pages: any[][] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i++) {
        const q: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries${q}`);
        expect(res.status).toBe(200);
        expect(sorted(Object.keys(res.body))).toEqual(['deliveries', 'nextCursor']);
        pages.push(res.body.deliveries);
        cursor = res.body.nextCursor;
        if (cursor === null) break;
        expect(typeof cursor).toBe('string');
      }
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat().map((d) => d.eventId)).toEqual([...eventIds].reverse());
      const all = await deliveries(t.key, e.id);
      expect(all.map((d) => d.id)).toEqual(pages.flat().map((d) => d.id));
      expect((await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries?limit=5`)).body.nextCursor).toBeNull();

      const badCursor = await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries?cursor=not!a!cursor`);
      expect(badCursor.status).toBe(400);
      expect(badCursor.body).toEqual({ error: 'invalid_cursor' });
      for (const q of ['?limit=0', '?limit=101', '?limit=abc', '?color=red']) {
        const res = await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries${q}`);
        expect(res.status, q).toBe(400);
        expect(res.body.error, q).toBe('validation_error');
      }
    });

    it('pages through deliveries written in one transaction (as a dispatcher batch writes them) without skipping any', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/batch` });
      // applyTransitions writes a batch's events with one writeEvents call: same transaction, same now().
      const written = await svc.db.transaction((tx) =>
        writeEvents(
          tx,
          Array.from({ length: 5 }, (_, i) => ({
            customerId: t.customerId,
            type: 'webhook.test' as const,
            createdAt: new Date(),
            data: { n: i },
          })),
          e.id,
        ),
      );
      const all = await deliveries(t.key, e.id);
      expect(sorted(all.map((d) => d.eventId))).toEqual(sorted(written));
      for (const limit of [1, 2, 3]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let i = 0; i < 10; i++) {
          const q: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const res = await api(t.key, 'GET', `/webhook-endpoints/${e.id}/deliveries${q}`);
          expect(res.status).toBe(200);
          seen.push(...res.body.deliveries.map((d: any) => d.eventId as string));
          cursor = res.body.nextCursor;
          if (cursor === null) break;
        }
        expect(sorted(seen), `limit=${limit}`).toEqual(sorted(written));
      }
    });

    it('redelivery sends the same eventId and body again and records the new attempt', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/again` });
      const eventId = await sendTest(t.key, e.id);
      const [d] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list[0]?.status === 'succeeded' ? list : undefined;
      });
      expect(rx.requests).toHaveLength(1);
      const res = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/deliveries/${d.id}/redeliver`);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ deliveryId: d.id, eventId, queued: true });
      const got = await rx.waitForRequests(2);
      expect(got.map((r) => r.headers['x-svc-event-id'])).toEqual([eventId, eventId]);
      expect(got[1]!.body).toBe(got[0]!.body);
      checkSignedEnvelope(got[1]!, e.secret);
      const [after] = await eventually(async () => {
        const list = await deliveries(t.key, e.id);
        return list[0]?.status === 'succeeded' && list[0].attempts.length === 2 ? list : undefined;
      });
      expect(after).toMatchObject({ id: d.id, eventId, attemptCount: 1, lastStatusCode: 200 });
      await deliveriesSettled(svc.db, [e.id]);
      expect(rx.requests).toHaveLength(2);
      expect(await deliveryRows(e.id)).toBe(1);
    });

    it('a URL change or rotation applies to deliveries claimed while an earlier request to the endpoint is still in flight', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      rx.enqueue({ status: 200, delayMs: 1500 }); // the first request stays in flight for 1.5 s
      const e = await createEndpoint(t.key, { url: `${rx.url}/old` });
      const first = await sendTest(t.key, e.id);
      await rx.waitForRequests(1);
      const patched = await api(t.key, 'PATCH', `/webhook-endpoints/${e.id}`, { url: `${rx.url}/new` });
      expect(patched.status).toBe(200);
      const rotated = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      const second = await sendTest(t.key, e.id);
      const got = await rx.waitForRequests(2);
      expect(got.map((r) => [r.headers['x-svc-event-id'], r.path])).toEqual([
        [first, '/old'],
        [second, '/new'],
      ]);
      const { t: ts, v1 } = parseSignature(got[1]!.headers['x-svc-signature']);
      expect(v1).toContain(hmacHex(rotated.body.secret, ts, got[1]!.rawBody));
    });

    it('after rotate-secret, deliveries carry two v1 signatures (new and old secret) until the overlap ends', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/rotating` });
      const oldSecret: string = e.secret;
      const rotated = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      expect(sorted(Object.keys(rotated.body))).toEqual(
        sorted([...ENDPOINT_KEYS, 'secret', 'previousSecretExpiresAt']),
      );
      expect(rotated.body).toMatchObject({ id: e.id, url: e.url, isActive: true, createdAt: e.createdAt });
      const newSecret: string = rotated.body.secret;
      expect(newSecret).toMatch(SECRET);
      expect(newSecret).not.toBe(oldSecret);
      expect(rotated.body.previousSecretExpiresAt).toMatch(ISO);
      expect(Math.abs(Date.parse(rotated.body.previousSecretExpiresAt) - (Date.now() + 24 * 3600_000))).toBeLessThan(
        120_000,
      );
      const detail = await getEndpoint(t.key, e.id);
      expect(JSON.stringify(detail)).not.toMatch(/secret|whsec_/i);
      expect(detail).toEqual(withoutSecret(rotated.body));

      await sendTest(t.key, e.id);
      const [r] = await rx.waitForRequests(1);
      const { t: ts, v1 } = parseSignature(r!.headers['x-svc-signature']);
      expect(v1).toHaveLength(2);
      expect(sorted(v1)).toEqual(sorted([hmacHex(newSecret, ts, r!.rawBody), hmacHex(oldSecret, ts, r!.rawBody)]));
      for (const s of [newSecret, oldSecret])
        expect(verifyWebhookSignature(r!.rawBody, String(r!.headers['x-svc-signature']), s)).toBe(true);
      await eventually(async () => (await deliveries(t.key, e.id))[0]?.status === 'succeeded');
      await sleep(100); // nothing in flight to this endpoint any more (see the next test for that case)

      // Once the 24 h overlap is over (moved into the past here), only the new secret signs.
      await svc.db.query(
        `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
        [e.id],
      );
      await sendTest(t.key, e.id);
      const [, r2] = await rx.waitForRequests(2);
      const second = parseSignature(r2!.headers['x-svc-signature']);
      expect(second.v1).toEqual([hmacHex(newSecret, second.t, r2!.rawBody)]);
      expect(verifyWebhookSignature(r2!.rawBody, String(r2!.headers['x-svc-signature']), oldSecret)).toBe(false);
      checkSignedEnvelope(r2!, newSecret);
    });

    it('a second rotation inside the overlap keeps the oldest secret (and its expiry), replacing only the newer one', async () => {
      const t = await createTenant(svc.url, { plan: 'pro' });
      const rx = await newReceiver();
      const e = await createEndpoint(t.key, { url: `${rx.url}/twice` });
      const original: string = e.secret;
      const first = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/rotate-secret`);
      const second = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/rotate-secret`);
      expect(second.status).toBe(200);
      expect(sorted(Object.keys(second.body))).toEqual(sorted([...ENDPOINT_KEYS, 'secret', 'previousSecretExpiresAt']));
      // The overlap is not extended: the original secret still expires when the first rotation said.
      expect(second.body.previousSecretExpiresAt).toBe(first.body.previousSecretExpiresAt);
      const middle: string = first.body.secret;
      const newest: string = second.body.secret;
      expect(new Set([original, middle, newest]).size).toBe(3);

      await sendTest(t.key, e.id);
      const [r] = await rx.waitForRequests(1);
      const header = String(r!.headers['x-svc-signature']);
      const { t: ts, v1 } = parseSignature(header);
      expect(sorted(v1)).toEqual(sorted([hmacHex(newest, ts, r!.rawBody), hmacHex(original, ts, r!.rawBody)]));
      expect(verifyWebhookSignature(r!.rawBody, header, original)).toBe(true);
      expect(verifyWebhookSignature(r!.rawBody, header, newest)).toBe(true);
      expect(verifyWebhookSignature(r!.rawBody, header, middle)).toBe(false);

      // After the overlap a rotation starts a new one, keeping the secret it replaces.
      await svc.db.query(
        `UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
        [e.id],
      );
      const third = await api(t.key, 'POST', `/webhook-endpoints/${e.id}/rotate-secret`);
      expect(Date.parse(third.body.previousSecretExpiresAt)).toBeGreaterThan(Date.now() + 23 * 3600_000);
      await sendTest(t.key, e.id);
      const [, r2] = await rx.waitForRequests(2);
      const h2 = String(r2!.headers['x-svc-signature']);
      expect(verifyWebhookSignature(r2!.rawBody, h2, newest)).toBe(true);
      expect(verifyWebhookSignature(r2!.rawBody, h2, third.body.secret)).toBe(true);
      expect(verifyWebhookSignature(r2!.rawBody, h2, original)).toBe(false);
    });
  });
});

describe('webhook URL guard (private URLs not allowed)', () => {
  let svc: Service;
  let t: Tenant;
  const receivers: Receiver[] = [];
  // A resolver the test controls: names → addresses, read at every lookup.
  const dns = new Map<string, string[]>([
    ['public.test', ['93.184.216.34']],
    ['public6.test', ['2606:2800:220:1:248:1893:25c8:1946']],
    ['rebind.test', ['127.0.0.1']],
    ['inside.test', ['10.0.0.5']],
    ['mapped.test', ['::ffff:127.0.0.1']],
    ['compat.test', ['::a9fe:a9fe']],
    ['meta.test', ['169.254.169.254']],
    ['ula.test', ['fd12:3456::1']],
    ['both.test', ['93.184.216.34', '192.168.1.10']],
    ['flip.test', ['93.184.216.34']],
  ]);
  const lookups: string[] = [];
  const resolve: Resolve = async (hostname) => {
    lookups.push(hostname);
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const addresses = dns.get(name);
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };

  beforeAll(async () => {
    svc = await startService({ env: { WORKER_POLL_MS: '50' }, resolve });
    t = await createTenant(svc.url, { plan: 'pro' });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await svc?.stop();
  });

  const SCHEME = /https/;
  const CREDENTIALS = /credential/;
  const PRIVATE = /private|loopback/;
  const hostile: [string, RegExp][] = [
    ['http://public.test/hook', SCHEME],
    ['HTTP://PUBLIC.TEST/hook', SCHEME],
    ['ws://public.test/hook', SCHEME],
    ['https://user:pass@public.test/hook', CREDENTIALS],
    ['https://user@public.test/hook', CREDENTIALS],
    ['https://localhost/hook', PRIVATE],
    ['https://LOCALHOST./hook', PRIVATE],
    ['https://api.localhost/hook', PRIVATE],
    ['https://metadata.google.internal/computeMetadata', PRIVATE],
    ['https://printer.local/hook', PRIVATE],
    ['https://intranet/hook', PRIVATE],
    ['https://127.0.0.1/hook', PRIVATE],
    ['https://127.0.0.1:8443/hook', PRIVATE],
    ['https://127.0.0.1./hook', PRIVATE],
    ['https://2130706433/hook', PRIVATE],
    ['https://0177.0.0.1/hook', PRIVATE],
    ['https://0x7f000001/hook', PRIVATE],
    ['https://0x7f.1/hook', PRIVATE],
    ['https://127.1/hook', PRIVATE],
    ['https://%31%32%37.0.0.1/hook', PRIVATE],
    ['https://0.0.0.0/hook', PRIVATE],
    ['https://0/hook', PRIVATE],
    ['https://10.0.0.1/hook', PRIVATE],
    ['https://10.255.255.255/hook', PRIVATE],
    ['https://172.16.0.1/hook', PRIVATE],
    ['https://172.31.255.254/hook', PRIVATE],
    ['https://192.168.1.1/hook', PRIVATE],
    ['https://169.254.169.254/latest/meta-data/', PRIVATE],
    ['https://100.64.0.1/hook', PRIVATE],
    ['https://224.0.0.1/hook', PRIVATE],
    ['https://[::1]/hook', PRIVATE],
    ['https://[::]/hook', PRIVATE],
    ['https://[fe80::1]/hook', PRIVATE],
    ['https://[fd00::1]/hook', PRIVATE],
    ['https://[fc00::1]/hook', PRIVATE],
    ['https://[::ffff:127.0.0.1]/hook', PRIVATE],
    ['https://[::ffff:7f00:1]/hook', PRIVATE],
    ['https://[0:0:0:0:0:ffff:10.0.0.1]/hook', PRIVATE],
    ['https://[::ffff:a9fe:a9fe]/hook', PRIVATE],
    ['https://[64:ff9b::7f00:1]/hook', PRIVATE],
    ['https://[::127.0.0.1]/hook', PRIVATE],
    ['https://[::a9fe:a9fe]/hook', PRIVATE],
    ['https://[::ffff:0:a00:1]/hook', PRIVATE],
    ['https://[2002:a9fe:a9fe::1]/hook', PRIVATE],
    ['https://compat.test/hook', PRIVATE],
    ['https://rebind.test/hook', PRIVATE],
    ['https://REBIND.test./hook', PRIVATE],
    ['https://inside.test/hook', PRIVATE],
    ['https://mapped.test/hook', PRIVATE],
    ['https://meta.test/hook', PRIVATE],
    ['https://ula.test/hook', PRIVATE],
    ['https://both.test/hook', PRIVATE],
  ];

  it.each(hostile)('refuses %s with 400 invalid_webhook_url', async (url, reason) => {
    const res = await call(svc.url, 'POST', '/webhook-endpoints', { key: t.key, body: { url } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_webhook_url', reason: expect.stringMatching(reason) });
  });

  it('accepts public HTTPS URLs, and refuses changing one to a hostile URL', async () => {
    const created: any[] = [];
    for (const url of [
      'https://public.test/hook',
      'https://93.184.216.34/hook',
      'https://[2606:4700:4700::1111]/hook',
      'https://public6.test:8443/hook?x=1',
    ]) {
      const res = await call(svc.url, 'POST', '/webhook-endpoints', { key: t.key, body: { url } });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.url).toBe(url);
      created.push(res.body);
    }
    expect(lookups).toContain('public.test');
    for (const url of ['https://rebind.test/hook', 'https://10.0.0.1/hook', 'http://public.test/hook']) {
      const res = await call(svc.url, 'PATCH', `/webhook-endpoints/${created[0].id}`, { key: t.key, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toBe('invalid_webhook_url');
    }
    expect((await call(svc.url, 'GET', `/webhook-endpoints/${created[0].id}`, { key: t.key })).body.url).toBe(
      'https://public.test/hook',
    );
    // Leave room for the next test (5 active at most).
    for (const e of created)
      expect((await call(svc.url, 'DELETE', `/webhook-endpoints/${e.id}`, { key: t.key })).status).toBe(204);
  });

  it('DNS rebinding: a name that resolved to a public address at creation and to loopback at delivery gets no connection', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const url = `https://flip.test:${rx.port}/hook`;
    const created = await call(svc.url, 'POST', '/webhook-endpoints', { key: t.key, body: { url } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id as string;

    dns.set('flip.test', ['127.0.0.1']); // the attacker's DNS now answers loopback, where rx listens
    const test = await call(svc.url, 'POST', `/webhook-endpoints/${id}/test`, { key: t.key });
    expect(test.status).toBe(202);
    const d = await eventually(async () => {
      const [first] = (await call(svc.url, 'GET', `/webhook-endpoints/${id}/deliveries`, { key: t.key })).body
        .deliveries;
      return first?.attempts.length >= 1 ? first : undefined;
    });
    expect(d.eventId).toBe(test.body.eventId);
    expect(d.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/private or loopback/) });
    const endpoint = (await call(svc.url, 'GET', `/webhook-endpoints/${id}`, { key: t.key })).body;
    expect(endpoint.lastFailureReason).toMatch(/private or loopback/);
    expect(endpoint.lastSuccessAt).toBeNull();
    expect(lookups.filter((h) => h === 'flip.test').length).toBeGreaterThanOrEqual(2); // at creation and at delivery
    // Retries too (30 ms, 120 ms…) must stay away from the receiver: wait until two were decided.
    await eventually(async () => {
      const [first] = (await call(svc.url, 'GET', `/webhook-endpoints/${id}/deliveries`, { key: t.key })).body
        .deliveries;
      return first?.attempts.length >= 3;
    });
    expect(rx.connections).toBe(0);
    expect(rx.requests).toHaveLength(0);
  });
});

describe('deliverer crash', () => {
  let database: TestDatabase;
  let apiSvc: Service;
  let t: Tenant;
  const receivers: Receiver[] = [];
  const workers: App[] = [];
  const startWorker = async () => {
    const w = await createApp(testConfig(ENV), { db: database.db, role: 'worker', log: pino({ level: 'silent' }) });
    workers.push(w);
    await w.start();
    return w;
  };
  const count = async (sql: string, params: unknown[] = []) =>
    (await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0]!.n;
  const sendTest = async (endpointId: string) => {
    const res = await call(apiSvc.url, 'POST', `/webhook-endpoints/${endpointId}/test`, { key: t.key });
    expect(res.status).toBe(202);
    return res.body.eventId as string;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    apiSvc = await startService({ role: 'api', database, env: ENV });
    t = await createTenant(apiSvc.url, { plan: 'pro' });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    for (const w of workers) await w.stop();
    await apiSvc?.stop();
    await database?.drop();
  });

  it('deliveries leased by a dead worker are delivered by another once the lease expires, each exactly once', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    const created = await call(apiSvc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${rx.url}/crash` },
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;

    // A first worker delivers three events, then stops cleanly.
    const early: string[] = [];
    for (let i = 0; i < 3; i++) early.push(await sendTest(endpointId));
    const w1 = await startWorker();
    await rx.waitForRequests(3);
    await eventually(
      async () =>
        (await count(`webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`, [endpointId])) === 3,
    );
    await w1.stop();

    // Twenty more, claimed by a worker that then died mid-batch (its lease still runs).
    const late: string[] = [];
    for (let i = 0; i < 20; i++) late.push(await sendTest(endpointId));
    const leased = await database.db.query<{ id: string; locked_until: Date }>(
      `UPDATE webhook_deliveries SET locked_by = 'dead', locked_until = now() + interval '1.5 seconds' WHERE endpoint_id = $1 AND status = 'pending' RETURNING id, locked_until`,
      [endpointId],
    );
    expect(leased).toHaveLength(20);
    await startWorker();

    await rx.waitForRequests(23, { timeoutMs: 15_000 });
    await eventually(
      async () =>
        (await count(`webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`, [endpointId])) === 23,
    );
    await deliveriesSettled(database.db, [endpointId]); // nothing pending: no later second copy can be claimed
    const byId = rx.byEventId();
    expect(sorted([...byId.keys()])).toEqual(sorted([...early, ...late]));
    for (const [eventId, reqs] of byId) expect(reqs.length, eventId).toBe(1);
    expect(rx.requests).toHaveLength(23);
    expect(
      await count(`webhook_deliveries WHERE endpoint_id = $1 AND (attempt_count <> 1 OR locked_by IS NOT NULL)`, [
        endpointId,
      ]),
    ).toBe(0);
    // The lease is respected, by ordering rather than by this process's clock: no attempt at a
    // leased delivery started before its lease ran out (attempt times are in whole milliseconds).
    expect(await count(`webhook_attempt_history WHERE delivery_id = ANY($1::uuid[])`, [leased.map((l) => l.id)])).toBe(
      20,
    );
    expect(
      await count(
        `webhook_attempt_history a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.id = ANY($1::uuid[]) AND a.attempted_at < date_trunc('milliseconds', $2::timestamptz)`,
        [leased.map((l) => l.id), leased[0]!.locked_until],
      ),
    ).toBe(0);
  });

  it('the 8th failed attempt is final: failed, completed, no next attempt and no further request', async () => {
    const rx = await startReceiver();
    receivers.push(rx);
    rx.respond({ status: 500, body: 'down' });
    const created = await call(apiSvc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${rx.url}/last` },
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;
    // Nothing delivers to this endpoint until the next worker: stop the one of the previous test.
    for (const w of workers) await w.stop();
    const eventId = await sendTest(endpointId);
    // Seven attempts already made (the schedule's 11 hours, skipped).
    expect(
      await database.db.query(`UPDATE webhook_deliveries SET attempt_count = 7 WHERE endpoint_id = $1 RETURNING id`, [
        endpointId,
      ]),
    ).toHaveLength(1);
    await startWorker();
    const d = await eventually(async () => {
      const [first] = (await call(apiSvc.url, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { key: t.key }))
        .body.deliveries;
      return first?.status === 'failed' ? first : undefined;
    });
    expect(d).toMatchObject({ eventId, attemptCount: 8, lastStatusCode: 500, nextAttemptAt: null });
    expect(d.completedAt).toMatch(ISO);
    expect(d.attempts).toHaveLength(1);
    await deliveriesSettled(database.db, [endpointId]); // no ninth attempt can be claimed
    expect(rx.requests).toHaveLength(1);
    const endpoint = (await call(apiSvc.url, 'GET', `/webhook-endpoints/${endpointId}`, { key: t.key })).body;
    expect(endpoint).toMatchObject({ isActive: true, lastFailureReason: 'HTTP 500', lastSuccessAt: null }); // failures never deactivate it
  });
});

describe('webhook retry window', () => {
  // The schedule (30 s, 2 min, 8 min, 32 min, 2 h, 4 h, 4 h: the spec's ~12 hours) run 10,000
  // times faster: about 3.9 s from the first attempt to the eighth.
  const SCALE = 0.0001;
  let svc: Service;
  let rx: Receiver;
  beforeAll(async () => {
    svc = await startService({ env: { ...ENV, RETRY_TIME_SCALE: String(SCALE) } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await svc?.stop();
  });

  it('a delivery that always fails is tried 8 times across the whole window, then dropped', async () => {
    rx.respond({ status: 500, body: 'down' });
    const t = await createTenant(svc.url, { plan: 'pro' });
    const created = await call(svc.url, 'POST', '/webhook-endpoints', { key: t.key, body: { url: `${rx.url}/down` } });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;
    const test = await call(svc.url, 'POST', `/webhook-endpoints/${endpointId}/test`, { key: t.key });
    expect(test.status).toBe(202);
    const d = await eventually(async () => {
      const [first] = (await call(svc.url, 'GET', `/webhook-endpoints/${endpointId}/deliveries`, { key: t.key })).body
        .deliveries;
      return first?.status === 'failed' ? first : undefined;
    }, 30_000);
    expect(d).toMatchObject({ eventId: test.body.eventId, attemptCount: 8, lastStatusCode: 500, nextAttemptAt: null });
    expect(d.attempts).toHaveLength(8);
    expect(rx.requests).toHaveLength(8);
    expect(new Set(rx.requests.map((r) => r.headers['x-svc-event-id']))).toEqual(new Set([test.body.eventId]));
    // The attempts spread over the scaled window: at least the sum of the delays less 20 % jitter
    // (a lower bound: a slow machine only lengthens it).
    const windowMs = [30_000, 120_000, 480_000, 1_920_000, 7_200_000, 14_400_000, 14_400_000].reduce((a, b) => a + b);
    expect(rx.requests[7]!.at - rx.requests[0]!.at).toBeGreaterThanOrEqual(windowMs * SCALE * 0.8);
    // Dropped: no ninth attempt. Nothing of this endpoint is pending, and the deliverer only claims
    // pending rows, so none can come (no need to sit out a last step of 4 h + 20 %).
    await deliveriesSettled(svc.db, [endpointId]);
    expect(rx.requests).toHaveLength(8);
    expect((await call(svc.url, 'GET', `/webhook-endpoints/${endpointId}`, { key: t.key })).body).toMatchObject({
      isActive: true,
      lastSuccessAt: null,
      lastFailureReason: 'HTTP 500',
      lastFailureAt: expect.stringMatching(ISO),
    });
  });
});
