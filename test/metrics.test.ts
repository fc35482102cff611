// /metrics on the real service (API role and worker role) after live sends through the provider
// emulator: the counters move, the token is enforced, and no label carries a message id, a phone
// number or a token.
import crypto from 'node:crypto';

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type App, createApp } from '../src/app.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import {
  call,
  createAccount,
  createKey,
  createTenant,
  eventually,
  type Service,
  startService,
  testConfig,
  textMessage,
} from './support/harness.js';
import { parseSamples, type Sample, sampleValue } from './support/prometheus-text.js';
import { startReceiver } from './support/receiver.js';

const METRICS_TOKEN = 'metrics-token-0123456789';
const ACCESS_TOKEN = 'EAAG-metrics-secret-token';

describe('Prometheus metrics', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let worker: App | null = null;
  const receiver = startReceiver();

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ METRICS_TOKEN, UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    await resetEmulator(emu);
  });
  afterAll(async () => {
    await (await receiver).close();
    await worker?.stop();
    await stop();
  });

  const scrape = async (url = svc.url): Promise<{ text: string; samples: Sample[] }> => {
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    return { text, samples: parseSamples(text) };
  };

  const tenant = async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Metrics', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    const accountId = await createAccount(svc.url, customer.body.id, {
      phoneNumber: '+15550109999',
      official: { phoneNumberId, wabaId: 'w1', accessToken: ACCESS_TOKEN },
    });
    return {
      customerId: customer.body.id as string,
      accountId,
      phoneNumberId,
      key: await createKey(svc.url, customer.body.id, {}),
    };
  };

  it('refuses a scrape without the bearer token', async () => {
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer nope-nope-nope-nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('moves accepted, attempt, latency, receipt, inbound and webhook counters after a live send', async () => {
    const before = (await scrape()).samples;
    const t = await tenant();
    const rx = await receiver;
    const endpoint = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: `${rx.url}/hook`, events: ['message.status'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);

    const sent = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: textMessage('metrics-1', { to: { type: 'phone', phoneE164: '+15551234567' } }),
    });
    expect(sent.status).toBe(201);
    const messageId = sent.body.messageId as string;
    await eventually(
      async () => (await call(svc.url, 'GET', `/messages/${messageId}`, { key: t.key })).body.status === 'delivered',
    );
    await rx.waitForRequests(2); // sent and delivered events
    await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberId, from: '+15557654321', text: 'hi' }),
    });

    const { text, samples } = await eventually(async () => {
      const s = await scrape();
      return sampleValue(s.samples, 'chatgate_inbound_messages_total', { result: 'ingested' }) >
        sampleValue(before, 'chatgate_inbound_messages_total', { result: 'ingested' })
        ? s
        : undefined;
    });
    const moved = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, name, labels) - sampleValue(before, name, labels);
    expect(moved('chatgate_messages_accepted_total', { content_type: 'text', plan: 'pro', sandbox: 'false' })).toBe(1);
    expect(moved('chatgate_send_attempts_total', { outcome: 'sent', code: '' })).toBe(1);
    expect(moved('chatgate_provider_request_duration_seconds_count', { operation: 'send' })).toBe(1);
    // The delivered receipt applies; the sent one may be stale by then (ignored) or early (parked).
    expect(moved('chatgate_receipts_total', { result: 'applied' })).toBeGreaterThanOrEqual(1);
    const receipts = ['applied', 'ignored', 'parked'].reduce(
      (n, result) => n + moved('chatgate_receipts_total', { result }),
      0,
    );
    expect(receipts).toBeGreaterThanOrEqual(2);
    expect(
      moved('chatgate_webhook_deliveries_total', { outcome: 'success', http_class: '2xx' }),
    ).toBeGreaterThanOrEqual(2);
    expect(moved('chatgate_webhook_delivery_latency_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(
      sampleValue(samples, 'chatgate_webhook_endpoint_attempts_total', {
        endpoint_id: endpoint.body.id,
        outcome: 'success',
      }),
    ).toBeGreaterThanOrEqual(2);

    // Gauges read at scrape time (cached 5 s: the scrape before the tenant may still answer), and process metrics.
    const gauges = await eventually(async () => {
      const g = (await scrape()).samples;
      return sampleValue(g, 'chatgate_quota_used_messages', { customer_id: t.customerId }) === 1 ? g : undefined;
    }, 10_000);
    for (const state of ['pending', 'queued', 'retry_wait'])
      expect(gauges.some((s) => s.name === 'chatgate_queue_oldest_due_age_seconds' && s.labels.state === state)).toBe(
        true,
      );
    expect(sampleValue(gauges, 'chatgate_chat_accounts', { status: 'CONNECTED' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(gauges, 'chatgate_quota_limit_messages', { customer_id: t.customerId })).toBe(20000);
    expect(sampleValue(gauges, 'chatgate_quota_used_ratio', { customer_id: t.customerId })).toBe(1 / 20000);
    expect(sampleValue(gauges, 'chatgate_db_pool_size')).toBeGreaterThanOrEqual(1);
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
    ])
      expect(
        samples.some((s) => s.name === name),
        name,
      ).toBe(true);

    // No label value is a message id, a phone number, a phone-number id or a token.
    const values = samples.flatMap((s) => Object.values(s.labels));
    for (const v of values) {
      expect(v).not.toMatch(/^\+?\d{8,15}$/);
      expect(v).not.toBe(messageId);
      expect(v).not.toBe(t.phoneNumberId);
    }
    for (const secret of [messageId, t.phoneNumberId, ACCESS_TOKEN, '15551234567', '15557654321', METRICS_TOKEN])
      expect(text).not.toContain(secret);
  });

  it('counts throttling refusals by account and failed attempts by code', async () => {
    const before = (await scrape()).samples;
    const t = await tenant();
    await emu.rule({ phoneNumberId: t.phoneNumberId, times: 1, httpStatus: 429, error: { code: 130429 } });
    await emu.rule({ to: '15551230077', times: 1, httpStatus: 400, error: { code: 131026 } });
    const ids: string[] = [];
    for (const [i, to] of ['+15551230066', '+15551230077'].entries()) {
      const res = await call(svc.url, 'POST', '/messages', {
        key: t.key,
        body: textMessage(`throttle-${i}`, { to: { type: 'phone', phoneE164: to } }),
      });
      expect(res.status).toBe(201);
      ids.push(res.body.messageId as string);
    }
    await eventually(async () => {
      const statuses = await Promise.all(
        ids.map(async (id) => (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body.status),
      );
      return statuses[0] !== 'queued' && statuses[0] !== 'pending' && statuses[1] === 'failed';
    });
    const { samples } = await scrape();
    const moved = (name: string, labels: Record<string, string>) =>
      sampleValue(samples, name, labels) - sampleValue(before, name, labels);
    expect(sampleValue(samples, 'chatgate_provider_throttled_total', { account_id: t.accountId, code: '130429' })).toBe(
      1,
    );
    expect(moved('chatgate_send_attempts_total', { outcome: 'transient', code: 'PROVIDER_RATE_LIMITED' })).toBe(1);
    expect(moved('chatgate_send_attempts_total', { outcome: 'permanent', code: 'UNDELIVERABLE' })).toBe(1);
    await emu.clearRules();
  });

  it('serves /metrics, /healthz and /readyz on the status port of a worker without the API', async () => {
    worker = await createApp(testConfig({ METRICS_TOKEN, WORKER_STATUS_PORT: '0', PROVIDER_BASE_URL: emu.url }), {
      db: svc.db,
      role: 'worker',
      log: pino({ level: 'silent' }),
    });
    const url = await worker.start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const { samples } = await scrape(url!);
    expect(samples.some((s) => s.name === 'chatgate_queue_messages')).toBe(true);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    // The API routes are not there.
    expect((await fetch(`${url}/messages`)).status).toBe(404);
  });
});

describe('Prometheus metrics without METRICS_TOKEN (an open scrape)', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc?.stop());

  it('leaves out the series labelled with customer, account or endpoint ids', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage('open-1') })).status).toBe(201);
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const samples = parseSamples(text);
    // The service's own series are there (and parse) ...
    expect(samples.some((s) => s.name === 'chatgate_queue_messages')).toBe(true);
    expect(samples.some((s) => s.name === 'chatgate_messages_accepted_total')).toBe(true);
    // ... but nothing that names a customer, an account or an endpoint.
    expect(text).not.toContain(t.customerId);
    expect(text).not.toContain(t.accountId);
    expect(text).not.toMatch(/customer_id=|account_id=|endpoint_id=/);
    expect(text).not.toContain('chatgate_quota_used_messages');
  });
});
