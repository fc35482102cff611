// The API observed (issue #36): /metrics on the real server counts its own requests by route
// template and status (never the raw URL) with a latency histogram, says whether the process is
// ready, and shows the webhook deliveries past their due time and the oldest one's wait.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createTenant, eventually, type Service, startService } from './support/harness.js';
import { parseSamples, type Sample, sampleValue } from './support/prometheus-text.js';

describe('metrics of the API itself', () => {
  let svc: Service;
  // The API role alone: no webhook worker, so a queued delivery stays due and waits.
  beforeAll(async () => {
    svc = await startService({ role: 'api', env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true' } });
  });
  afterAll(() => svc?.stop());

  const scrape = async (): Promise<{ text: string; samples: Sample[] }> => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    return { text, samples: parseSamples(text) };
  };

  it('counts requests by method, route template and status, with their latency, never the raw URL', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const id = crypto.randomUUID();
    const before = (await scrape()).samples;
    const byId = { method: 'GET', route: '/messages/:id', status: '404' };
    for (let i = 0; i < 3; i++)
      expect((await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).status).toBe(404);
    expect((await call(svc.url, 'GET', `/messages/${id}`, { key: 'sk_nope' })).status).toBe(401);
    expect((await fetch(`${svc.url}/no-such-page-${id}?x=1`)).status).toBe(404);

    const { text, samples } = await scrape();
    expect(
      sampleValue(samples, 'chatgate_http_requests_total', byId) -
        sampleValue(before, 'chatgate_http_requests_total', byId),
    ).toBe(3);
    expect(sampleValue(samples, 'chatgate_http_requests_total', { ...byId, status: '401' })).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(samples, 'chatgate_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    // The customer made over the operator API is counted under its template too.
    expect(
      sampleValue(samples, 'chatgate_http_requests_total', {
        method: 'POST',
        route: '/admin/customers',
        status: '201',
      }),
    ).toBeGreaterThanOrEqual(1);
    const latency = { method: 'GET', route: '/messages/:id' };
    expect(sampleValue(samples, 'chatgate_http_request_duration_seconds_count', latency)).toBeGreaterThanOrEqual(4);
    expect(sampleValue(samples, 'chatgate_http_request_duration_seconds_bucket', { ...latency, le: '+Inf' })).toBe(
      sampleValue(samples, 'chatgate_http_request_duration_seconds_count', latency),
    );
    expect(sampleValue(samples, 'chatgate_http_request_duration_seconds_sum', latency)).toBeGreaterThan(0);
    // No id or path of a request became a label value.
    expect(text).not.toContain(id);
    expect(text).not.toContain('no-such-page');
    for (const s of samples.filter((x) => x.name.startsWith('chatgate_http_')))
      expect(s.labels.route === 'unmatched' || s.labels.route!.startsWith('/'), s.labels.route).toBe(true);
  });

  it('says the process is ready (1), by the check /readyz answers with', async () => {
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    expect(sampleValue((await scrape()).samples, 'chatgate_ready')).toBe(1);
  });

  it('shows the webhook deliveries past their due time and how long the oldest has waited', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const endpoint = await call(svc.url, 'POST', '/webhook-endpoints', {
      key: t.key,
      body: { url: 'http://127.0.0.1:9/backlog' },
    });
    expect(endpoint.status).toBe(201);
    expect((await call(svc.url, 'POST', `/webhook-endpoints/${endpoint.body.id}/test`, { key: t.key })).status).toBe(
      202,
    );
    // The gauges are read at scrape time and cached a few seconds: wait for the delivery to show.
    await eventually(async () => {
      const { samples } = await scrape();
      return (
        sampleValue(samples, 'chatgate_webhook_backlog_deliveries') >= 1 &&
        sampleValue(samples, 'chatgate_webhook_backlog_oldest_due_age_seconds') > 0
      );
    });
  });
});
