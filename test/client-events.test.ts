// The receiving side of @chatgate/client (imported from its source): constructEvent on the events the
// real service delivers (each type it can be made to send here, through both clients), the signer
// against the service's own signatures, createTestWebhook for every event type, and each refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  ChatGate,
  ChatGateOperator,
  constructEvent,
  createTestWebhook,
  signWebhookPayload,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
  WebhookVerificationError,
} from '../packages/client/src/index.js';
import { checkedFetch } from './support/checked-fetch.js';
import { ADMIN_TOKEN, createTenant, eventually, type Service, setQuotaUsed, startService } from './support/harness.js';
import { type ReceivedRequest, type Receiver, startReceiver } from './support/receiver.js';

/** One line per event, read through its typed `data`; a type left out fails to compile (never). */
function summary(ev: WebhookEvent): string {
  switch (ev.type) {
    case 'message.status':
      return `${ev.type} ${ev.data.externalId} ${ev.data.status}`;
    case 'message.inbound':
      return `${ev.type} ${ev.data.from} ${ev.data.text}`;
    case 'sender.first_inbound':
      return `${ev.type} ${ev.data.from}`;
    case 'webhook.test':
      return `${ev.type} ${ev.data.webhookEndpointId}`;
    case 'quota.threshold':
      return `${ev.type} ${ev.data.threshold}`;
    case 'template.status':
      return `${ev.type} ${ev.data.name} ${ev.data.status}`;
    case 'account.messaging_limit':
      return `${ev.type} ${ev.data.thresholdPercent}`;
    default: {
      const unknown: never = ev;
      return `ignored ${(unknown as { type: string }).type}`;
    }
  }
}

/** The reason of the WebhookVerificationError a call throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
  return 'accepted';
}

describe('constructEvent on the service’s deliveries', () => {
  let svc: Service;
  let rx: Receiver;
  beforeAll(async () => {
    svc = await startService({ env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true', WORKER_POLL_MS: '50' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await svc?.stop();
  });

  it('verifies, parses and types every event the service sends here; the signer makes the service’s signature', async () => {
    const tenant = await createTenant(svc.url, { plan: 'pro' });
    const op = new ChatGateOperator({ adminToken: ADMIN_TOKEN, baseUrl: svc.url, fetch: checkedFetch });
    const cg = new ChatGate({ apiKey: tenant.sandboxKey, baseUrl: svc.url, fetch: checkedFetch });
    const live = new ChatGate({ apiKey: tenant.key, baseUrl: svc.url, fetch: checkedFetch });
    const endpoint = await live.createWebhookEndpoint({ url: `${rx.url}/events`, events: [...WEBHOOK_EVENT_TYPES] });
    const fromUs = (r: ReceivedRequest) => r.path === '/events';

    await live.testWebhookEndpoint(endpoint.id); // webhook.test
    await cg.sendMessage({
      externalId: 'events-1',
      to: { type: 'phone', phoneE164: '+15551230500' },
      content: { type: 'text', text: 'Hi' },
    }); // message.status
    await op.ingestInboundMessage(tenant.accountId, {
      providerMessageId: `wamid.events-${Date.now()}`,
      from: '+15551230501',
      text: 'Hello',
    }); // message.inbound and sender.first_inbound
    const { limit } = await op.getCustomerUsage(tenant.customerId);
    await setQuotaUsed(svc.db, tenant.customerId, (limit! * 4) / 5 - 1);
    await live.sendMessage({
      externalId: 'events-quota',
      to: { type: 'phone', phoneE164: '+15551230502' },
      content: { type: 'text', text: 'the one at 80 %' },
    }); // quota.threshold 80

    const wanted = ['message.status', 'message.inbound', 'sender.first_inbound', 'webhook.test', 'quota.threshold'];
    const requests = await eventually(async () => {
      const rs = rx.requests.filter(fromUs);
      const types = new Set(rs.map((r) => r.headers['x-svc-event']));
      if (wanted.every((type) => types.has(type))) return [...rs];
      throw new Error(`seen so far: ${[...types].join(', ')}`);
    }, 30_000);
    const summaries = new Set<string>();
    for (const r of requests) {
      const ev = constructEvent(r.rawBody, r.headers, endpoint.secret);
      expect(ev).toEqual(JSON.parse(r.body));
      expect([ev.type, ev.eventId]).toEqual([r.headers['x-svc-event'], r.headers['x-svc-event-id']]);
      // The same from a string body and a fetch Headers, and with the right secret among others.
      const headers = new Headers(r.headers as Record<string, string>);
      expect(constructEvent(r.body, headers, ['whsec_other', endpoint.secret])).toEqual(ev);
      const header = String(r.headers['x-svc-signature']);
      expect(signWebhookPayload(r.rawBody, endpoint.secret, Number(/t=(\d+)/.exec(header)![1]))).toBe(header);
      summaries.add(summary(ev));
    }
    expect([...summaries]).toEqual(
      expect.arrayContaining([
        `webhook.test ${endpoint.id}`,
        expect.stringMatching(/^message\.status events-1 (sent|delivered|read)$/),
        'message.inbound +15551230501 Hello',
        'sender.first_inbound +15551230501',
        'quota.threshold 80',
      ]),
    );

    // After a rotation the service signs with both secrets: either alone verifies.
    const rotated = await live.rotateWebhookSecret(endpoint.id);
    const again = await live.testWebhookEndpoint(endpoint.id);
    const [second] = await rx.waitForRequests(1, { filter: (r) => r.headers['x-svc-event-id'] === again.eventId });
    for (const secrets of [rotated.secret, endpoint.secret, [rotated.secret, endpoint.secret]])
      expect(constructEvent(second!.rawBody, second!.headers, secrets).eventId).toBe(again.eventId);
    expect(refusal(() => constructEvent(second!.rawBody, second!.headers, 'whsec_neither'))).toBe('no_match');
  });
});

describe('constructEvent and createTestWebhook', () => {
  const secret = 'whsec_test_secret';
  const now = Date.UTC(2026, 0, 1, 12);
  const t = Math.floor(now / 1000);
  const samples: WebhookEvent[] = [
    {
      eventId: 'evt_00000000-0000-4000-8000-000000000001',
      type: 'template.status',
      createdAt: '2026-01-01T12:00:00.000Z',
      data: {
        chatAccountId: '00000000-0000-4000-8000-000000000002',
        templateId: '1234',
        name: 'order_update',
        language: 'en',
        status: 'APPROVED',
        previousStatus: 'PENDING',
        category: 'UTILITY',
        qualityScore: null,
        reason: null,
        change: 'status',
        timestamp: '2026-01-01T12:00:00.000Z',
      },
    },
    {
      eventId: 'evt_00000000-0000-4000-8000-000000000003',
      type: 'account.messaging_limit',
      createdAt: '2026-01-01T12:00:00.000Z',
      data: {
        chatAccountIds: ['00000000-0000-4000-8000-000000000002'],
        portfolioId: null,
        thresholdPercent: 80,
        used: 200,
        limit: 250,
        tier: 'TIER_250',
        source: 'provider',
        windowHours: 24,
      },
    },
  ];

  it('a test request it signs is accepted, for every event type, and typed by its type', () => {
    for (const ev of samples) {
      const req = createTestWebhook(ev, secret, { timestamp: t });
      expect(req.headers).toMatchObject({ 'x-svc-event': ev.type, 'x-svc-event-id': ev.eventId });
      expect(constructEvent(req.body, req.headers, secret, { now })).toEqual(ev);
    }
    expect(summary(samples[0]!)).toBe('template.status order_update APPROVED');
    // Left out: a fresh eventId and now as createdAt; several secrets sign as during a rotation.
    const fresh = createTestWebhook({ type: 'webhook.test', data: { webhookEndpointId: 'w', message: 'hi' } }, [
      'whsec_new',
      secret,
    ]);
    expect(fresh.headers['x-svc-signature'].match(/v1=/g)).toHaveLength(2);
    const ev = constructEvent(Buffer.from(fresh.body), fresh.headers, secret);
    expect(ev).toMatchObject({ type: 'webhook.test', eventId: expect.stringMatching(/^evt_[0-9a-f-]{36}$/) });
    expect(Math.abs(Date.parse(ev.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  it('refuses, with a reason: no header, a malformed one, a wrong secret, a changed body, the tolerance, a body that is no event', () => {
    const req = createTestWebhook(samples[0]!, secret, { timestamp: t });
    const h = (signature?: string) => ({ ...req.headers, 'x-svc-signature': signature });
    expect(refusal(() => constructEvent(req.body, h(undefined), secret, { now }))).toBe('missing_signature');
    expect(refusal(() => constructEvent(req.body, h(`t=${t}`), secret, { now }))).toBe('malformed_signature');
    expect(refusal(() => constructEvent(req.body, h('v1=abc'), secret, { now }))).toBe('malformed_signature');
    expect(refusal(() => constructEvent(req.body, req.headers, 'whsec_wrong', { now }))).toBe('no_match');
    expect(refusal(() => constructEvent(`${req.body} `, req.headers, secret, { now }))).toBe('no_match');
    expect(refusal(() => constructEvent(req.body, req.headers, secret, { now: now + 301_000 }))).toBe(
      'outside_tolerance',
    );
    expect(refusal(() => constructEvent(req.body, req.headers, secret, { now: now - 301_000 }))).toBe(
      'outside_tolerance',
    );
    expect(refusal(() => constructEvent(req.body, req.headers, secret, { now: now + 300_000 }))).toBe('accepted');
    expect(
      refusal(() => constructEvent(req.body, req.headers, secret, { now: now + 400_000, toleranceSeconds: 400 })),
    ).toBe('accepted');
    for (const body of ['not json', '[]', '{"type":"message.status"}', 'null']) {
      const signed = { 'x-svc-signature': signWebhookPayload(body, secret, t) };
      expect(refusal(() => constructEvent(body, signed, secret, { now }))).toBe('invalid_payload');
    }
    const parsed = JSON.parse(req.body) as unknown as string;
    expect(() => constructEvent(parsed, req.headers, secret, { now })).toThrow(TypeError);
    // A Node header given as an array (a repeated header): its first value.
    expect(constructEvent(req.body, { 'x-svc-signature': [req.headers['x-svc-signature']] }, secret, { now })).toEqual(
      samples[0],
    );
  });
});
