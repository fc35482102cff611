// Issue #27, part 2, in chromium against the real server, the provider emulator and a webhook
// receiver: a message's page shows every send attempt (the failed one with the provider's answer
// and its next try), its receipts and the webhook deliveries of its events, in words and linked;
// a delivery's page shows the body and headers each attempt sent; an endpoint is deleted after a
// confirmation; the failed deliveries of a period are replayed once. A reload after each action
// repeats nothing; a viewer reads but acts on nothing.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkPage, launchBrowser, loggedIn, text } from './support/browser.js';
import { startLiveService } from './support/emulator.js';
import { call, createTenant, eventually } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

type Delivery = { id: string; eventId: string; status: string; attemptCount: number };

describe('portal: investigating a message and its webhooks (#27 part 2)', () => {
  let live: Awaited<ReturnType<typeof startLiveService>>;
  let receiver: Receiver;
  let browser: Browser;
  let url: string;
  let pro: Awaited<ReturnType<typeof createTenant>>;
  const owner = 'owner@investigate.example';
  const viewer = 'viewer@investigate.example';

  beforeAll(async () => {
    // Retries a hundred thousand times faster: a webhook delivery's 8 attempts (about 12 hours) take well under a second.
    live = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true', RETRY_TIME_SCALE: '0.00001' });
    url = live.svc.url;
    receiver = await startReceiver();
    pro = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, pro.customerId, owner);
    await createPortalUser(url, pro.customerId, viewer, 'viewer');
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  async function endpoint(path: string, events = ['message.status']) {
    const res = await call(url, 'POST', '/webhook-endpoints', {
      key: pro.key,
      body: { url: `${receiver.url}${path}`, events },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function deliveries(id: string): Promise<Delivery[]> {
    const res = await call(url, 'GET', `/webhook-endpoints/${id}/deliveries?limit=100`, { key: pro.key });
    expect(res.status).toBe(200);
    return res.body.deliveries as Delivery[];
  }

  /** The page after a form landed on a GET address, reloaded. */
  async function reloadedGet(page: Page, path: RegExp) {
    expect(new URL(page.url()).pathname).toMatch(path);
    const res = await page.reload();
    expect(res!.request().method()).toBe('GET');
    expect(res!.status()).toBe(200);
  }

  it('shows a message: a failed attempt with the provider answer and next try, the accepted one, the receipt and the webhook deliveries', async () => {
    const hookId = await endpoint('/status');
    // The first send is refused as temporarily unavailable, the second accepted.
    await live.emu.rule({
      to: '15557770101',
      times: 1,
      httpStatus: 503,
      error: { code: 2, message: 'Service unavailable now' },
    });
    const sent = await call(url, 'POST', '/messages', {
      key: pro.key,
      body: {
        chatAccountId: pro.accountId,
        externalId: 'investigate-1',
        to: { type: 'phone', phoneE164: '+15557770101' },
        content: { type: 'text', text: 'hello' },
      },
    });
    expect(sent.status).toBe(201);
    const id = sent.body.messageId as string;
    await eventually(async () => {
      const m = (await call(url, 'GET', `/messages/${id}`, { key: pro.key })).body;
      return m.status === 'delivered';
    }, 60_000);
    await eventually(
      async () => (await deliveries(hookId)).filter((d) => d.status === 'succeeded').length === 2,
      60_000,
    );

    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/messages/${id}`);
    const timeline = await text(page.locator('ol.timeline'));
    expect(timeline).toMatch(
      /Attempt 1 failed, to be tried again: .*Service unavailable now \(PROVIDER_UNAVAILABLE\); provider code 2\./,
    );
    expect(timeline).toMatch(/Next attempt at \d{4}-\d{2}-\d{2}/);
    expect(timeline).toMatch(/Attempt 2: the provider accepted the message \(provider message id wamid\./);
    expect(timeline).toContain('Receipt: delivered to the phone.');
    // Each event's delivery to the endpoint, linked.
    expect(await page.locator('ol.timeline li.delivery').count()).toBe(2);
    expect(timeline).toContain(`Webhook to ${receiver.url}/status: delivered, 1 attempt, last answer HTTP 200`);
    // Fields in words; no literal null anywhere in the page's text.
    const fields = await text(page.locator('dl.fields').first());
    expect(fields).toMatch(/Your id \(externalId\)\s+investigate-1/);
    expect(fields).toMatch(/Send attempts\s+2 of at most/);
    expect(fields).not.toMatch(/attemptCount|chatAccountId|null/);
    expect(await page.locator('main').innerText()).not.toMatch(/\bnull\b/);
    await page.getByRole('link', { name: 'its messages' }).waitFor();
    await checkPage(page, '40-message-investigated');

    // The sent event's delivery: its body and the headers each attempt sent.
    await page
      .locator('ol.timeline li', { hasText: 'Attempt 2' })
      .getByRole('link', { name: 'delivery details' })
      .click();
    expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/portal/webhooks/${hookId}/deliveries/[0-9a-f-]{36}$`));
    const body = await text(page.locator('pre.request-body'));
    const got = receiver.requests.find((r) => r.path === '/status' && r.body === body);
    expect(got, 'the body shown is the body received').toBeDefined();
    expect(JSON.parse(body).data).toMatchObject({ messageId: id, status: 'sent' });
    const headers = await text(page.locator('pre.headers'));
    expect(headers).toContain(`POST ${receiver.url}/status`);
    expect(headers).toContain(`x-svc-event-id: ${String(got!.headers['x-svc-event-id'])}`);
    expect(headers).toContain('x-svc-event: message.status');
    // The signature's time is the one sent; its HMAC is not kept, and no secret is shown.
    const t = /t=(\d+)/.exec(String(got!.headers['x-svc-signature']))![1];
    expect(headers).toContain(`x-svc-signature: t=${t},v1=<`);
    expect(await page.content()).not.toContain('whsec_');
    await checkPage(page, '41-delivery-request');
    await page.context().close();
  });

  it('deletes an endpoint after a confirmation; a reload deletes nothing more; a viewer cannot', async () => {
    const id = await endpoint('/to-delete');
    const other = await endpoint('/stays');
    const seen = await loggedIn(browser, url, viewer);
    await seen.goto(`${url}/portal/webhooks/${id}`);
    expect(await seen.getByRole('link', { name: 'Delete endpoint…' }).count()).toBe(0);
    await seen.goto(`${url}/portal/webhooks/${id}/delete`);
    expect(await text(seen.getByRole('alert'))).toContain('viewer');
    expect(await seen.getByRole('button', { name: 'Delete the endpoint' }).count()).toBe(0);
    await seen.context().close();
    const v = new PortalClient(url);
    await v.login(viewer);
    expect((await v.submit(`/portal/webhooks/${id}`, `/portal/webhooks/${id}/delete`, {})).status).toBe(403);
    expect((await call(url, 'GET', `/webhook-endpoints/${id}`, { key: pro.key })).status).toBe(200);

    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/webhooks/${id}`);
    await page.getByRole('link', { name: 'Delete endpoint…' }).click();
    await checkPage(page, '42-webhook-delete-confirm');
    expect(await text(page.getByRole('alert'))).toContain(`${receiver.url}/to-delete`);
    await page.getByRole('button', { name: 'Delete the endpoint' }).click();
    expect(await text(page.getByRole('status'))).toContain('The endpoint is deleted');
    await reloadedGet(page, /^\/portal\/webhooks$/);
    expect((await call(url, 'GET', `/webhook-endpoints/${id}`, { key: pro.key })).status).toBe(404);
    expect((await call(url, 'GET', `/webhook-endpoints/${other}`, { key: pro.key })).status).toBe(200);
    expect(await page.getByRole('link', { name: `${receiver.url}/to-delete` }).count()).toBe(0);
    // The same confirmation sent again finds nothing to delete.
    const c = new PortalClient(url);
    await c.login(owner);
    const again = await c.submit('/portal/webhooks', `/portal/webhooks/${id}/delete`, {});
    expect(again.status).toBe(404);
    expect((await call(url, 'GET', `/webhook-endpoints/${other}`, { key: pro.key })).status).toBe(200);
    await page.goto(`${url}/portal/audit`);
    const entries = await page.locator('#audit tbody tr').allInnerTexts();
    // Named by its URL (decision 0050), not its id.
    expect(entries.filter((e) => e.includes('webhook.delete') && e.includes(`${receiver.url}/to-delete`))).toHaveLength(
      1,
    );
    await page.context().close();
  });

  it('replays the failed deliveries of a period once: confirmed, counted, audited; a reload or a second submit queues nothing more', async () => {
    const id = await endpoint('/flaky', ['webhook.test']);
    receiver.handle((r) => (r.path === '/flaky' ? 500 : undefined));
    for (let i = 0; i < 3; i++)
      expect((await call(url, 'POST', `/webhook-endpoints/${id}/test`, { key: pro.key })).status).toBe(202);
    await eventually(async () => (await deliveries(id)).filter((d) => d.status === 'failed').length === 3, 120_000);
    const failedPosts = receiver.requests.filter((r) => r.path === '/flaky').length;
    receiver.handle((r) => (r.path === '/flaky' ? 200 : undefined));

    const page = await loggedIn(browser, url, owner);
    await page.goto(`${url}/portal/webhooks/${id}`);
    expect(await page.locator('tr.delivery', { hasText: 'failed: no more retries' }).count()).toBe(3);
    const since = new Date(Date.now() - 3600_000).toISOString().slice(0, 16);
    await page.getByLabel('From (UTC)').fill(since);
    await page.getByRole('button', { name: 'Replay failed deliveries…' }).click();
    expect(await text(page.getByRole('alert'))).toContain('Send again the 3 failed deliveries');
    await checkPage(page, '43-webhook-replay-confirm');
    // The confirmation page changes nothing.
    expect((await deliveries(id)).filter((d) => d.status === 'failed')).toHaveLength(3);
    await page.getByRole('button', { name: 'Replay them' }).click();
    expect(await text(page.getByRole('status'))).toContain('Every failed delivery of the period is queued again.');
    await reloadedGet(page, new RegExp(`^/portal/webhooks/${id}$`));
    await eventually(async () => (await deliveries(id)).every((d) => d.status === 'succeeded'), 60_000);
    // Each event was sent once more, with its own event id, and once only.
    const replayed = receiver.requests.filter((r) => r.path === '/flaky').slice(failedPosts);
    expect(replayed).toHaveLength(3);
    expect(new Set(replayed.map((r) => r.headers['x-svc-event-id'])).size).toBe(3);
    expect((await deliveries(id)).map((d) => d.attemptCount)).toEqual([1, 1, 1]);

    // The same POST again (a resubmitted form) finds nothing failed left.
    const c = new PortalClient(url);
    await c.login(owner);
    const confirm = `/portal/webhooks/${id}/replay?since=${encodeURIComponent(`${since}Z`)}&until=${encodeURIComponent(new Date().toISOString())}`;
    const none = await c.get(confirm);
    expect(none.text).toContain('nothing to replay');
    const resubmit = await c.post(
      `/portal/webhooks/${id}/replay?since=${encodeURIComponent(`${since}:00Z`)}&until=${encodeURIComponent(new Date().toISOString())}`,
      { _csrf: c.formToken((await c.get(`/portal/webhooks/${id}`)).text) },
    );
    expect(resubmit.status).toBe(303);
    expect(resubmit.headers.get('location')).toBe(`/portal/webhooks/${id}?done=replayed-none`);
    expect(receiver.requests.filter((r) => r.path === '/flaky').length).toBe(failedPosts + 3);

    await page.goto(`${url}/portal/audit`);
    const entries = await page.locator('#audit tbody tr').allInnerTexts();
    const audited = entries.filter((e) => e.includes('webhook.replay_failed') && e.includes(`${receiver.url}/flaky`));
    expect(audited.some((e) => e.includes('3 queued'))).toBe(true);
    await page.context().close();

    // A viewer sees the history and the delivery's page, not the replay.
    const v = new PortalClient(url);
    await v.login(viewer);
    const endpointPage = await v.get(`/portal/webhooks/${id}`);
    expect(endpointPage.text).not.toContain('Replay failed deliveries');
    const one = (await deliveries(id))[0]!;
    const detail = await v.get(`/portal/webhooks/${id}/deliveries/${one.id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain(one.eventId);
    expect(detail.text).not.toContain('>Redeliver<');
    expect((await v.post(confirm, { _csrf: v.formToken(endpointPage.text) })).status).toBe(403);
  });

  it('says so when there is nothing yet, and shows no other customer a delivery', async () => {
    const empty = await createTenant(url, { plan: 'pro' });
    await createPortalUser(url, empty.customerId, 'owner@empty.example');
    const page = await loggedIn(browser, url, 'owner@empty.example');
    await page.goto(`${url}/portal/webhooks`);
    expect(await text(page.locator('p.empty'))).toContain('No endpoints yet');
    const fresh = await call(url, 'POST', '/webhook-endpoints', {
      key: empty.key,
      body: { url: `${receiver.url}/empty`, events: ['message.status'] },
    });
    await page.goto(`${url}/portal/webhooks/${fresh.body.id}`);
    expect(await text(page.locator('p.empty'))).toContain('No deliveries yet');
    await checkPage(page, '44-webhook-empty');
    // Another customer's delivery is not found, even under this customer's own endpoint.
    const theirs = (
      await deliveries((await call(url, 'GET', '/webhook-endpoints', { key: pro.key })).body.webhookEndpoints[0].id)
    )[0]!;
    const res = await page.goto(`${url}/portal/webhooks/${fresh.body.id}/deliveries/${theirs.id}`);
    expect(res!.status()).toBe(404);
    await page.context().close();
  });
});
