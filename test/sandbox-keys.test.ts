// Sandbox keys never read or receive live data (decision 0024-sandbox-keys), through the API and,
// where the portal shows the same resource, through the portal: endpoints and forwarding rules
// made with a sandbox key are sandbox ones (only sandbox events reach them, only sandbox keys see
// them), live messages, broadcasts, suppressions and usage are invisible to a sandbox key, and
// what shapes live traffic (inbox filters, suppression lists, opt-out keywords, templates at the
// provider) cannot be changed with one. Real service, emulator and receivers; both backends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, startLiveService } from './support/emulator.js';
import {
  call,
  createKey,
  createTenant,
  eventually,
  type Service,
  startService,
  type Tenant,
} from './support/harness.js';
import { type OfficialCustomer, officialCustomer } from './support/official-customer.js';
import { createPortalUser, PortalClient } from './support/portal.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const SPEC_EVENTS = ['message.status', 'message.inbound', 'sender.first_inbound', 'webhook.test'];

describe('sandbox keys never read or receive live data', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let rx: Receiver;
  let t: OfficialCustomer & { sandboxKey: string };
  let portal: PortalClient;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    rx = await startReceiver();
    const c = await officialCustomer(svc.url, emu, { plan: 'pro' });
    t = { ...c, sandboxKey: await createKey(svc.url, c.customerId, { sandbox: true, templateAccess: 'manage' }) };
    await createPortalUser(svc.url, t.customerId, 'owner-sandbox@example.com');
    portal = new PortalClient(svc.url);
    expect((await portal.login('owner-sandbox@example.com')).status).toBe(303);
  });
  afterAll(async () => {
    await rx?.close();
    await stop?.();
  });

  const api = (key: string, method: string, path: string, body?: unknown) => call(svc.url, method, path, { key, body });
  const inbound = async (from: string, text: string) => {
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: t.phoneNumberIds[0], from, text, name: 'Ann' }),
    });
    expect((await res.json()).delivered).toBe(true);
  };
  const send = async (key: string, to: string) => {
    const res = await api(key, 'POST', '/messages', {
      externalId: `sbx-${n++}`,
      to: { type: 'phone', phoneE164: to },
      content: { type: 'text', text: 'hello' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { messageId: res.body.messageId as string, externalId: res.body.externalId as string };
  };
  const reaches = (key: string, id: string, status: string) =>
    eventually(async () => (await api(key, 'GET', `/messages/${id}`)).body.status === status);
  const endpoint = async (key: string, path: string) => {
    const res = await api(key, 'POST', '/webhook-endpoints', { url: `${rx.url}${path}`, events: SPEC_EVENTS });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const bodiesAt = (path: string) =>
    rx.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as Record<string, any>);

  describe('webhook endpoints', () => {
    let liveEndpoint: string;
    let sandboxEndpoint: string;
    beforeAll(async () => {
      liveEndpoint = await endpoint(t.key, '/live');
      sandboxEndpoint = await endpoint(t.sandboxKey, '/sandbox');
    });

    it("a sandbox key's endpoint gets the events of sandbox messages only; a live endpoint gets live and sandbox ones", async () => {
      await inbound('16505550101', 'hello from a real person');
      const live = await send(t.key, '+16505550101');
      await reaches(t.key, live.messageId, 'delivered');
      const sandbox = await send(t.sandboxKey, '+15551230088');
      await reaches(t.sandboxKey, sandbox.messageId, 'read');

      // The live endpoint: the inbound message, the live message's statuses and the sandbox ones.
      const atLive = await eventually(async () => {
        const b = bodiesAt('/live');
        const ok =
          b.some((e) => e.type === 'message.inbound') &&
          b.some((e) => e.data.messageId === live.messageId && e.data.status === 'delivered') &&
          b.some((e) => e.data.messageId === sandbox.messageId && e.data.status === 'read');
        return ok && b;
      });
      // The sandbox endpoint: the sandbox message's statuses, nothing else. Every delivery row is
      // written with its event, so those of the live events above exist by now if they ever will.
      await eventually(async () =>
        bodiesAt('/sandbox').some((e) => e.data.messageId === sandbox.messageId && e.data.status === 'read'),
      );
      const history = (await api(t.sandboxKey, 'GET', `/webhook-endpoints/${sandboxEndpoint}/deliveries?limit=100`))
        .body.deliveries as { eventId: string; eventType: string }[];
      const liveEventIds = atLive.filter((e) => e.data.messageId !== sandbox.messageId).map((e) => e.eventId);
      expect(liveEventIds.length).toBeGreaterThan(0);
      expect(history.map((d) => d.eventId)).not.toEqual(expect.arrayContaining([liveEventIds[0]]));
      expect(history.filter((d) => liveEventIds.includes(d.eventId))).toEqual([]);
      expect(new Set(history.map((d) => d.eventType))).toEqual(new Set(['message.status']));
      for (const e of bodiesAt('/sandbox')) expect(e.data.messageId).toBe(sandbox.messageId);
    });

    it('a sandbox key sees and manages only sandbox endpoints; a live key and the portal only live ones', async () => {
      const ids = async (key: string) =>
        ((await api(key, 'GET', '/webhook-endpoints')).body.webhookEndpoints as { id: string }[]).map((e) => e.id);
      expect(await ids(t.sandboxKey)).toEqual([sandboxEndpoint]);
      expect(await ids(t.key)).toEqual([liveEndpoint]);
      const notFound = { error: 'webhook_endpoint_not_found' };
      const base = `/webhook-endpoints/${liveEndpoint}`;
      for (const [method, path, body] of [
        ['GET', base],
        ['PATCH', base, { description: 'mine now' }],
        ['POST', `${base}/rotate-secret`],
        ['POST', `${base}/test`],
        ['GET', `${base}/deliveries`],
        ['DELETE', base],
      ] as [string, string, unknown?][]) {
        const res = await api(t.sandboxKey, method, path, body);
        expect({ method, path, status: res.status, body: res.body }).toEqual({
          method,
          path,
          status: 404,
          body: notFound,
        });
      }
      expect(await api(t.key, 'GET', `/webhook-endpoints/${sandboxEndpoint}`)).toMatchObject({
        status: 404,
        body: notFound,
      });
      const list = await portal.get('/portal/webhooks');
      expect(list.status).toBe(200);
      expect(list.text).toContain(`${rx.url}/live`);
      expect(list.text).not.toContain(`${rx.url}/sandbox`);
      expect((await portal.get(`/portal/webhooks/${sandboxEndpoint}`)).status).toBe(404);
    });
  });

  it('a sandbox key lists and reads only sandbox messages, and cannot replay a live one by its externalId', async () => {
    const live = await send(t.key, '+16505550102');
    const sandbox = await send(t.sandboxKey, '+15551230077');
    const listed = (await api(t.sandboxKey, 'GET', '/messages?limit=100')).body.messages as {
      messageId: string;
      sandbox: boolean;
    }[];
    expect(listed.map((m) => m.messageId)).toContain(sandbox.messageId);
    expect(listed.filter((m) => !m.sandbox)).toEqual([]);
    for (const id of [live.messageId, live.externalId])
      expect(await api(t.sandboxKey, 'GET', `/messages/${id}`)).toMatchObject({
        status: 404,
        body: { error: 'message_not_found' },
      });
    expect((await api(t.sandboxKey, 'GET', `/messages?externalId=${live.externalId}`)).body.messages).toEqual([]);
    // The live key still reads both.
    const all = (await api(t.key, 'GET', '/messages?limit=100')).body.messages as { messageId: string }[];
    expect(all.map((m) => m.messageId)).toEqual(expect.arrayContaining([live.messageId, sandbox.messageId]));
    // The same request again with the sandbox key: a conflict, never the live message's acknowledgement.
    const replay = await api(t.sandboxKey, 'POST', '/messages', {
      externalId: live.externalId,
      to: { type: 'phone', phoneE164: '+16505550102' },
      content: { type: 'text', text: 'hello' },
    });
    expect(replay.status).toBe(409);
    expect(JSON.stringify(replay.body)).not.toContain(live.messageId);
  });

  it('forwarding rules: a sandbox rule never gets a live inbound message, and each key sees its own', async () => {
    const rule = async (key: string, path: string) => {
      const res = await api(key, 'POST', '/forwarding-rules', {
        name: path,
        condition: { type: 'contains', pattern: 'forward me' },
        destination: { type: 'http', url: `${rx.url}${path}` },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    const sandboxRule = await rule(t.sandboxKey, '/rule-sandbox');
    const liveRule = await rule(t.key, '/rule-live');
    // Two live messages, one after the other: a sandbox rule's POST for the first would have left
    // together with the live rule's, long before the second message is even received.
    await inbound('16505550103', 'please forward me');
    await rx.waitForRequests(1, { filter: (r) => r.path === '/rule-live' });
    await inbound('16505550104', 'forward me too');
    await rx.waitForRequests(2, { filter: (r) => r.path === '/rule-live' });
    expect(rx.requests.filter((r) => r.path === '/rule-sandbox')).toEqual([]);

    const ids = async (key: string) =>
      ((await api(key, 'GET', '/forwarding-rules')).body.forwardingRules as { id: string }[]).map((r) => r.id);
    expect(await ids(t.sandboxKey)).toEqual([sandboxRule]);
    expect(await ids(t.key)).toEqual([liveRule]);
    for (const [method, body] of [['GET'], ['PATCH', { isActive: false }], ['DELETE']] as [string, unknown?][])
      expect(await api(t.sandboxKey, method, `/forwarding-rules/${liveRule}`, body)).toMatchObject({
        status: 404,
        body: { error: 'forwarding_rule_not_found' },
      });
    const page = await portal.get('/portal/inbox');
    expect(page.text).toContain(`${rx.url}/rule-live`);
    expect(page.text).not.toContain(`${rx.url}/rule-sandbox`);
  });

  it('inbox filters, suppression lists and opt-out keywords: nothing live read, nothing changed', async () => {
    const account = t.accountIds[0]!;
    expect((await api(t.key, 'POST', `/chat-accounts/${account}/suppressions`, { phone: '+16505550199' })).status).toBe(
      201,
    );
    expect((await api(t.sandboxKey, 'GET', '/inbound-messages')).body).toEqual({
      inboundMessages: [],
      nextCursor: null,
    });
    expect((await api(t.sandboxKey, 'GET', `/chat-accounts/${account}/suppressions`)).body).toEqual({
      suppressions: [],
      nextCursor: null,
    });
    const refused = { status: 403, body: { error: 'sandbox_not_supported' } };
    for (const [method, path, body] of [
      ['GET', `/chat-accounts/${account}/inbox-filter`],
      ['PUT', `/chat-accounts/${account}/inbox-filter`, { mode: 'blacklist', numbers: ['+16505550101'] }],
      ['POST', `/chat-accounts/${account}/suppressions`, { phone: '+16505550198' }],
      ['DELETE', `/chat-accounts/${account}/suppressions/%2B16505550199`],
      ['GET', `/chat-accounts/${account}/opt-out-keywords`],
      ['PUT', `/chat-accounts/${account}/opt-out-keywords`, { keywords: [] }],
    ] as [string, string, unknown?][])
      expect({ method, path, ...(await api(t.sandboxKey, method, path, body)) }).toMatchObject({
        method,
        path,
        ...refused,
      });
    // Nothing changed for the live key.
    expect((await api(t.key, 'GET', `/chat-accounts/${account}/inbox-filter`)).body).toMatchObject({ mode: 'off' });
    expect(
      (await api(t.key, 'GET', `/chat-accounts/${account}/suppressions`)).body.suppressions.map(
        (s: { phone: string }) => s.phone,
      ),
    ).toEqual(['+16505550199']);
  });

  it('broadcasts and usage: a sandbox key sees none of the live ones and no live counts', async () => {
    const created = await api(t.key, 'POST', '/messages/broadcast', {
      externalId: 'live-broadcast',
      content: { type: 'text', text: 'Spring sale' },
      recipients: [{ phoneE164: '+16505550110' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.broadcastId as string;
    expect(
      (await api(t.key, 'GET', '/broadcasts')).body.broadcasts.map((b: { broadcastId: string }) => b.broadcastId),
    ).toContain(id);
    expect((await api(t.sandboxKey, 'GET', '/broadcasts')).body).toEqual({ broadcasts: [], nextCursor: null });
    for (const ref of [id, 'live-broadcast'])
      expect(await api(t.sandboxKey, 'GET', `/broadcasts/${ref}`)).toMatchObject({
        status: 404,
        body: { error: 'broadcast_not_found' },
      });
    expect(await api(t.sandboxKey, 'POST', `/broadcasts/${id}/cancel`)).toMatchObject({
      status: 403,
      body: { error: 'sandbox_not_supported' },
    });

    const live = (await api(t.key, 'GET', '/usage')).body;
    expect(live.used).toBeGreaterThan(0);
    const sandbox = (await api(t.sandboxKey, 'GET', '/usage')).body;
    expect(sandbox).toMatchObject({
      month: live.month,
      plan: 'pro',
      limit: live.limit,
      used: 0,
      remaining: live.limit,
    });
    expect(sandbox.byAccount).toEqual([]);
    expect(sandbox.byDay.map((d: { date: string }) => d.date)).toEqual(live.byDay.map((d: { date: string }) => d.date));
    for (const d of sandbox.byDay)
      expect(d).toEqual({ date: d.date, accepted: 0, sent: 0, delivered: 0, read: 0, failed: 0 });
  });
});

describe("the API and the portal apply the same rules (they are the services' rules)", () => {
  let svc: Service;
  let starter: Tenant;
  let pro: Tenant;
  let other: Tenant;
  const portals: Record<string, PortalClient> = {};

  beforeAll(async () => {
    svc = await startService({ env: { UNSAFE_ALLOW_PRIVATE_URLS: 'true' } });
    starter = await createTenant(svc.url, { plan: 'starter' });
    pro = await createTenant(svc.url, { plan: 'pro', defaultCountry: 'US' });
    other = await createTenant(svc.url, { plan: 'pro' });
    for (const [name, t] of [
      ['starter', starter],
      ['pro', pro],
    ] as const) {
      await createPortalUser(svc.url, t.customerId, `${name}-rules@example.com`);
      portals[name] = new PortalClient(svc.url);
      expect((await portals[name]!.login(`${name}-rules@example.com`)).status).toBe(303);
    }
  });
  afterAll(async () => svc?.stop());

  const api = (key: string, method: string, path: string, body?: unknown) => call(svc.url, method, path, { key, body });

  it('plan gates: webhooks, the inbox and its rules, broadcasts are refused by both edges for a plan without them', async () => {
    const gated = { status: 403, body: { error: 'feature_not_available', plan: 'starter' } };
    expect(await api(starter.key, 'POST', '/webhook-endpoints', { url: 'https://example.com/hook' })).toMatchObject(
      gated,
    );
    expect(await api(starter.key, 'GET', '/inbound-messages')).toMatchObject(gated);
    expect(
      await api(starter.key, 'POST', '/forwarding-rules', {
        condition: { type: 'contains', pattern: 'x' },
        destination: { type: 'http', url: 'https://example.com/f' },
      }),
    ).toMatchObject(gated);
    expect(
      await api(starter.key, 'POST', '/messages/broadcast', {
        externalId: 'b',
        content: { type: 'text', text: 'x' },
        recipients: [{ phoneE164: '+16505550120' }],
      }),
    ).toMatchObject(gated);

    const portal = portals.starter!;
    for (const [pagePath, action, fields] of [
      ['/portal/webhooks', '/portal/webhooks', { url: 'https://example.com/hook', events: 'message.status' }],
      [
        '/portal/inbox',
        '/portal/inbox/rules',
        { conditionType: 'contains', pattern: 'x', url: 'https://example.com/f' },
      ],
      ['/portal/broadcasts', '/portal/broadcasts', { externalId: 'b', content: '{}', recipients: '[]' }],
    ] as [string, string, Record<string, string>][]) {
      const shown = await portal.get(pagePath);
      expect(shown.text, pagePath).toContain('is not in your plan');
      const res = await portal.submit(pagePath, action, fields);
      expect({ action, status: res.status }).toEqual({ action, status: 403 });
      // The same refusal, in the customer's words (issue #27.5: no raw code in the portal).
      expect(res.text).toContain('is not in your plan');
      expect(res.text).not.toContain('feature_not_available');
    }
  });

  it('inbox filters: the same account rule and the same phone numbers (default country, same problems) in both', async () => {
    const path = `/chat-accounts/${pro.accountId}/inbox-filter`;
    const bad = await api(pro.key, 'PUT', path, { mode: 'whitelist', numbers: ['4155550101', 'no number'] });
    expect(bad).toMatchObject({
      status: 400,
      body: { error: 'validation_error', details: [{ path: 'numbers.1', message: 'is not a phone number' }] },
    });
    const portal = portals.pro!;
    const refused = await portal.submit('/portal/inbox', `/portal/inbox/filters/${pro.accountId}`, {
      mode: 'whitelist',
      numbers: '4155550101\nno number',
    });
    expect(refused.status).toBe(400);
    // The same problem, named by its line as the customer typed it (issue #27.5).
    expect(refused.text).toContain('Line 2');
    expect(refused.text).toContain('is not a phone number');

    const saved = await portal.submit('/portal/inbox', `/portal/inbox/filters/${pro.accountId}`, {
      mode: 'blacklist',
      numbers: '415-555-0102',
    });
    expect(saved.status).toBe(303); // post/redirect/get (issue #27.1)
    expect((await api(pro.key, 'GET', path)).body).toEqual({
      chatAccountId: pro.accountId,
      mode: 'blacklist',
      numbers: ['+14155550102'],
    });
    expect((await api(pro.key, 'PUT', path, { mode: 'blacklist', numbers: ['(415) 555-0102'] })).body.numbers).toEqual([
      '+14155550102',
    ]);

    // Another customer's account: not found, in both.
    expect(await api(pro.key, 'GET', `/chat-accounts/${other.accountId}/inbox-filter`)).toMatchObject({
      status: 404,
      body: { error: 'account_not_found' },
    });
    const foreign = await portal.submit('/portal/inbox', `/portal/inbox/filters/${other.accountId}`, {
      mode: 'off',
      numbers: '',
    });
    expect(foreign.status).toBe(404);
  });

  it('the inbox sender lookup reads a national number in the default country in both', async () => {
    const api1 = await api(pro.key, 'GET', '/inbound-senders/4155550103');
    expect(api1.body).toMatchObject({ phoneE164: '+14155550103', hasWritten: false });
    const page = await portals.pro!.get(`/portal/inbox/sender?phone=4155550103&chatAccountId=${pro.accountId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('+14155550103');
    const bad = await portals.pro!.get(`/portal/inbox/sender?phone=nonsense&chatAccountId=${pro.accountId}`);
    expect(bad.text).toContain('is not a phone number');
  });
});
