// Tenant isolation: every read and write of customer A replayed with customer B's keys and A's
// ids must look as if A's data did not exist (spec: "Every call is scoped to the calling
// customer; another customer's data is never visible (it appears as non-existent)"), a key
// scoped to one account sees and sends only through that account, and a revoked key is refused
// at once everywhere without touching anyone else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, startLiveService } from './support/emulator.js';
import {
  call,
  createKey,
  createTenant,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';
import { officialCustomer } from './support/official-customer.js';

type Ids = { messageId: string; externalId: string };

describe('tenant isolation', () => {
  let svc: Service;
  let url: string;
  // A: two official accounts (a1, a2), a live key, a sandbox key and a sandbox key scoped to a1.
  let A: Awaited<ReturnType<typeof createTenant>>;
  let aScopedKey: string;
  let a1: string;
  let a2: string;
  // B: one account, a live key and a sandbox key.
  let B: Awaited<ReturnType<typeof createTenant>>;
  let bKeys: string[];
  const aMessages: Ids[] = []; // sent through a1
  let aOther: Ids; // sent through a2
  let aSentProviderId: string;
  let bMessage: Ids;

  const send = async (key: string, externalId: string, extra: Record<string, unknown> = {}) => {
    const res = await call(url, 'POST', '/messages', { key, body: textMessage(externalId, extra) });
    if (res.status !== 201) throw new Error(`send ${externalId}: ${res.status} ${JSON.stringify(res.body)}`);
    return { messageId: res.body.messageId as string, externalId };
  };

  /** Every page of GET /messages for a key (limit 2 so that pagination is exercised too). */
  const listAll = async (key: string, query = '') => {
    const out: Record<string, any>[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const q: string = `?limit=2${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await call(url, 'GET', `/messages${q}`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      out.push(...res.body.messages);
      cursor = res.body.nextCursor;
      if (cursor === null) return out;
    }
    throw new Error('pagination did not end');
  };

  beforeAll(async () => {
    svc = await startService();
    url = svc.url;
    A = await createTenant(url, { accounts: 2 });
    [a1, a2] = A.accountIds as [string, string];
    aScopedKey = await createKey(url, A.customerId, { chatAccountId: a1, sandbox: true });
    B = await createTenant(url);
    bKeys = [B.key, B.sandboxKey];

    // A's messages, with sandbox keys so that they progress (...88 reads, ...99 fails).
    for (const [i, phone] of ['+15551230001', '+15551230088', '+15551230099'].entries()) {
      aMessages.push(
        await send(A.sandboxKey, `a-ext-${i}`, { chatAccountId: a1, to: { type: 'phone', phoneE164: phone } }),
      );
    }
    aMessages.push(await send(A.key, 'a-ext-live', { chatAccountId: a1 }));
    aOther = await send(A.sandboxKey, 'a-other-ext', { chatAccountId: a2 });
    bMessage = await send(B.sandboxKey, 'b-ext-0');

    // Wait until A's first message was handed to the (simulated) provider.
    aSentProviderId = await eventually(async () => {
      const res = await call(url, 'GET', `/messages/${aMessages[0]!.messageId}`, { key: A.key });
      return typeof res.body?.providerMessageId === 'string' ? (res.body.providerMessageId as string) : undefined;
    });
  });
  afterAll(() => svc?.stop());

  describe("customer B with A's ids", () => {
    it("GET /messages/{id}: A's messageIds and externalIds are 404 message_not_found for B", async () => {
      for (const m of [...aMessages, aOther]) {
        // Control: A itself reads them.
        const own = await call(url, 'GET', `/messages/${m.messageId}`, { key: A.key });
        expect(own.status).toBe(200);
        expect(own.body.messageId).toBe(m.messageId);
        for (const key of bKeys) {
          for (const id of [m.messageId, m.messageId.toUpperCase(), m.externalId]) {
            const res = await call(url, 'GET', `/messages/${encodeURIComponent(id)}`, { key });
            expect({ id, status: res.status, body: res.body }).toEqual({
              id,
              status: 404,
              body: { error: 'message_not_found' },
            });
          }
        }
      }
    });

    it("GET /messages?chatAccountId=<A's account> is 404 account_not_found for B", async () => {
      for (const key of bKeys) {
        for (const account of [a1, a2, a1.toUpperCase()]) {
          const res = await call(url, 'GET', `/messages?chatAccountId=${account}`, { key });
          expect({ account, status: res.status, body: res.body }).toEqual({
            account,
            status: 404,
            body: { error: 'account_not_found' },
          });
        }
      }
      // Control: B's own account filter works.
      const own = await call(url, 'GET', `/messages?chatAccountId=${B.accountId}`, { key: B.key });
      expect(own.status).toBe(200);
      expect(own.body.messages.map((m: { messageId: string }) => m.messageId)).toContain(bMessage.messageId);
    });

    it("GET /messages with B's keys lists only B's messages, on every page", async () => {
      const aIds = new Set([...aMessages, aOther].map((m) => m.messageId));
      for (const key of bKeys) {
        const all = await listAll(key);
        expect(all.map((m) => m.messageId)).toContain(bMessage.messageId);
        for (const m of all) {
          expect(aIds.has(m.messageId)).toBe(false);
          expect(m.chatAccountId).toBe(B.accountId);
        }
        // Every status filter, too.
        for (const status of ['pending', 'queued', 'sent', 'delivered', 'read', 'failed']) {
          for (const m of await listAll(key, `&status=${status}`)) expect(aIds.has(m.messageId)).toBe(false);
        }
      }
      // Control: A's own listing holds all of A's messages.
      const aAll = (await listAll(A.key)).map((m) => m.messageId);
      expect(aAll.sort()).toEqual([...aIds].sort());
    });

    it("GET /messages?externalId=<A's externalId> is an empty list for B", async () => {
      for (const m of [...aMessages, aOther]) {
        const own = await call(url, 'GET', `/messages?externalId=${encodeURIComponent(m.externalId)}`, { key: A.key });
        expect(own.body.messages.map((x: { messageId: string }) => x.messageId)).toEqual([m.messageId]);
        for (const key of bKeys) {
          const res = await call(url, 'GET', `/messages?externalId=${encodeURIComponent(m.externalId)}`, { key });
          expect(res).toMatchObject({ status: 200, body: { messages: [], nextCursor: null } });
        }
      }
    });

    it("GET /messages?providerMessageId=<A's providerMessageId> is an empty list for B", async () => {
      const own = await call(url, 'GET', `/messages?providerMessageId=${encodeURIComponent(aSentProviderId)}`, {
        key: A.key,
      });
      expect(own.status).toBe(200);
      expect(own.body.messages.map((x: { messageId: string }) => x.messageId)).toEqual([aMessages[0]!.messageId]);
      for (const key of bKeys) {
        const res = await call(url, 'GET', `/messages?providerMessageId=${encodeURIComponent(aSentProviderId)}`, {
          key,
        });
        expect(res).toMatchObject({ status: 200, body: { messages: [], nextCursor: null } });
      }
    });

    it("GET /chat-accounts with B's keys shows only B's account", async () => {
      for (const key of bKeys) {
        const res = await call(url, 'GET', '/chat-accounts', { key });
        expect(res.status).toBe(200);
        expect(res.body.accounts.map((a: { id: string }) => a.id)).toEqual([B.accountId]);
      }
      const own = await call(url, 'GET', '/chat-accounts', { key: A.key });
      expect(own.body.accounts.map((a: { id: string }) => a.id).sort()).toEqual([a1, a2].sort());
    });

    it("POST /messages with B's key and A's chatAccountId is 422 invalid_chat_account and creates nothing", async () => {
      for (const [i, key] of bKeys.entries()) {
        for (const account of [a1, a2, a1.toUpperCase()]) {
          const externalId = `b-into-a-${i}-${account}`;
          const res = await call(url, 'POST', '/messages', {
            key,
            body: textMessage(externalId, { chatAccountId: account }),
          });
          expect({ status: res.status, body: res.body }).toEqual({
            status: 422,
            body: { error: 'invalid_chat_account' },
          });
          for (const reader of [key, A.key]) {
            const listed = await call(url, 'GET', `/messages?externalId=${encodeURIComponent(externalId)}`, {
              key: reader,
            });
            expect(listed.body.messages).toEqual([]);
          }
        }
      }
      // The refused externalId was not consumed: B can use it for its own account.
      const retry = await call(url, 'POST', '/messages', { key: B.sandboxKey, body: textMessage(`b-into-a-1-${a1}`) });
      expect(retry.status).toBe(201);
    });

    it("POST /messages with B's key and the same externalId as A's message is a new 201, not A's message", async () => {
      const target = aMessages[1]!;
      // Same payload as A's send, apart from the account (B has only one).
      const body = textMessage(target.externalId, { to: { type: 'phone', phoneE164: '+15551230088' } });
      const res = await call(url, 'POST', '/messages', { key: B.sandboxKey, body });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ externalId: target.externalId, status: 'pending', queued: true });
      expect(res.body.messageId).not.toBe(target.messageId);
      // Each customer resolves the externalId to its own message.
      const forB = await call(url, 'GET', `/messages/${target.externalId}`, { key: B.key });
      expect(forB.status).toBe(200);
      expect(forB.body).toMatchObject({ messageId: res.body.messageId, chatAccountId: B.accountId });
      const forA = await call(url, 'GET', `/messages/${target.externalId}`, { key: A.key });
      expect(forA.body).toMatchObject({ messageId: target.messageId, chatAccountId: a1 });
      // A's idempotent repeat still answers with A's own message.
      const repeatA = await call(url, 'POST', '/messages', {
        key: A.sandboxKey,
        body: textMessage(target.externalId, { chatAccountId: a1, to: { type: 'phone', phoneE164: '+15551230088' } }),
      });
      expect(repeatA).toMatchObject({ status: 200, body: { messageId: target.messageId } });
      // And B's repeat answers with B's.
      const repeatB = await call(url, 'POST', '/messages', { key: B.sandboxKey, body });
      expect(repeatB).toMatchObject({ status: 200, body: { messageId: res.body.messageId } });
    });
  });

  describe("A's key scoped to account a1", () => {
    it('GET /messages?chatAccountId: own other account is 403 key_scope_violation, a foreign one 404', async () => {
      const other = await call(url, 'GET', `/messages?chatAccountId=${a2}`, { key: aScopedKey });
      expect({ status: other.status, body: other.body }).toEqual({
        status: 403,
        body: { error: 'key_scope_violation' },
      });
      const foreign = await call(url, 'GET', `/messages?chatAccountId=${B.accountId}`, { key: aScopedKey });
      expect({ status: foreign.status, body: foreign.body }).toEqual({
        status: 404,
        body: { error: 'account_not_found' },
      });
      const own = await call(url, 'GET', `/messages?chatAccountId=${a1}`, { key: aScopedKey });
      expect(own.status).toBe(200);
      expect(own.body.messages.length).toBeGreaterThan(0);
    });

    it('GET /messages/{id} of a message sent through the other account is 404', async () => {
      for (const id of [aOther.messageId, aOther.externalId]) {
        const res = await call(url, 'GET', `/messages/${id}`, { key: aScopedKey });
        expect({ id, status: res.status, body: res.body }).toEqual({
          id,
          status: 404,
          body: { error: 'message_not_found' },
        });
      }
      const own = await call(url, 'GET', `/messages/${aMessages[0]!.messageId}`, { key: aScopedKey });
      expect(own).toMatchObject({ status: 200, body: { messageId: aMessages[0]!.messageId, chatAccountId: a1 } });
    });

    it("GET /messages lists only the scoped account's messages", async () => {
      const all = await listAll(aScopedKey);
      // The scoped key is a sandbox key: it reads no live message (decision 0024-sandbox-keys), so
      // a-ext-live, sent with A's live key, is not among them.
      const sandboxOnes = aMessages.filter((m) => m.externalId !== 'a-ext-live');
      expect(all.map((m) => m.messageId).sort()).toEqual(sandboxOnes.map((m) => m.messageId).sort());
      for (const m of all) expect(m.chatAccountId).toBe(a1);
      const byExternal = await call(url, 'GET', `/messages?externalId=${aOther.externalId}`, { key: aScopedKey });
      expect(byExternal).toMatchObject({ status: 200, body: { messages: [] } });
    });

    it('GET /chat-accounts shows only the scoped account', async () => {
      const res = await call(url, 'GET', '/chat-accounts', { key: aScopedKey });
      expect(res.status).toBe(200);
      expect(res.body.accounts.map((a: { id: string }) => a.id)).toEqual([a1]);
    });

    it('POST /messages through another account is 403 key_scope_violation; without chatAccountId it uses the scoped one', async () => {
      for (const account of [a2, B.accountId]) {
        const externalId = `scoped-into-${account}`;
        const res = await call(url, 'POST', '/messages', {
          key: aScopedKey,
          body: textMessage(externalId, { chatAccountId: account }),
        });
        expect({ account, status: res.status, body: res.body }).toEqual({
          account,
          status: 403,
          body: { error: 'key_scope_violation' },
        });
        const listed = await call(url, 'GET', `/messages?externalId=${externalId}`, { key: A.key });
        expect(listed.body.messages).toEqual([]);
      }
      const ok = await call(url, 'POST', '/messages', { key: aScopedKey, body: textMessage('scoped-default') });
      expect(ok.status).toBe(201);
      const read = await call(url, 'GET', `/messages/${ok.body.messageId}`, { key: A.key });
      expect(read.body.chatAccountId).toBe(a1);
    });
  });

  describe('revocation by the operator', () => {
    it("revoking B's live key refuses it at once on every endpoint; B's other key and A are unaffected", async () => {
      // Warm every cache with the key first, so that "at once" is really tested.
      expect((await call(url, 'GET', '/chat-accounts', { key: B.key })).status).toBe(200);
      expect((await call(url, 'GET', `/messages/${bMessage.messageId}`, { key: B.key })).status).toBe(200);

      const listed = await call(url, 'GET', `/admin/customers/${B.customerId}/api-keys`, { admin: true });
      expect(listed.status).toBe(200);
      const live = listed.body.apiKeys.filter(
        (k: { sandbox: boolean; maskedKey: string }) => !k.sandbox && k.maskedKey.endsWith(B.key.slice(-4)),
      );
      expect(live).toHaveLength(1);
      const revoked = await call(url, 'DELETE', `/admin/api-keys/${live[0].id}`, { admin: true });
      expect(revoked.status).toBe(204);

      const refused = {
        status: 401,
        body: { error: 'Invalid API key', message: expect.stringContaining('unknown or revoked') },
      };
      const attempts: [string, string, unknown?][] = [
        ['POST', '/messages', textMessage('b-after-revoke')],
        ['GET', '/messages'],
        ['GET', `/messages?chatAccountId=${B.accountId}`],
        ['GET', `/messages/${bMessage.messageId}`],
        ['GET', `/messages/${bMessage.externalId}`],
        ['GET', '/chat-accounts'],
      ];
      for (const [method, path, body] of attempts) {
        const res = await call(url, method, path, { key: B.key, body });
        expect({ method, path, status: res.status, body: res.body }).toEqual({ method, path, ...refused });
      }
      // The refused send created nothing.
      const after = await call(url, 'GET', '/messages?externalId=b-after-revoke', { key: B.sandboxKey });
      expect(after).toMatchObject({ status: 200, body: { messages: [] } });

      // The listing records the revocation.
      const relisted = await call(url, 'GET', `/admin/customers/${B.customerId}/api-keys`, { admin: true });
      const entry = relisted.body.apiKeys.find((k: { id: string }) => k.id === live[0].id);
      expect(typeof entry.revokedAt).toBe('string');

      // B's sandbox key and all of A's keys still work.
      expect((await call(url, 'GET', `/messages/${bMessage.messageId}`, { key: B.sandboxKey })).status).toBe(200);
      for (const key of [A.key, A.sandboxKey, aScopedKey]) {
        expect((await call(url, 'GET', '/chat-accounts', { key })).status).toBe(200);
        expect((await call(url, 'GET', `/messages/${aMessages[0]!.messageId}`, { key })).status).toBe(200);
      }
      const aSend = await call(url, 'POST', '/messages', {
        key: A.sandboxKey,
        body: textMessage('a-after-b-revoked', { chatAccountId: a1 }),
      });
      expect(aSend.status).toBe(201);
    });
  });
});

// Every list and get of the API through the one scope rule (src/shared/scope.ts, decision 0070):
// customer A's live key sees A's live data (and A's sandbox messages), A's sandbox key only A's
// sandbox data, and customer B's live and sandbox keys nothing of A's at all.
describe('every list: live key, sandbox key, another customer', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  type Keys = { customerId: string; accountId: string; phoneNumberId: string; live: string; sandbox: string };
  let A: Keys;
  let B: Keys;
  const SENDER = '+16505550123';
  const SUPPRESSED = '+16505550199';
  // A's data, by kind: the ids a live key of A must see, and the sandbox ones.
  const a = {} as Record<
    'liveMessage' | 'sandboxMessage' | 'broadcast' | 'liveEndpoint' | 'sandboxEndpoint' | 'liveRule' | 'sandboxRule',
    string
  > & { inbound: string; broadcastMessage: string };

  const api = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await call(svc.url, method, path, { key, body });
    return res;
  };
  const created = async (key: string, path: string, body: unknown, field: string) => {
    const res = await api(key, 'POST', path, body);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(201);
    return res.body[field] as string;
  };
  const customer = async (): Promise<Keys> => {
    const c = await officialCustomer(svc.url, emu, { plan: 'pro' });
    return {
      customerId: c.customerId,
      accountId: c.accountIds[0]!,
      phoneNumberId: c.phoneNumberIds[0]!,
      live: c.key,
      sandbox: await createKey(svc.url, c.customerId, { sandbox: true }),
    };
  };

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService({ UNSAFE_ALLOW_PRIVATE_URLS: 'true' }));
    A = await customer();
    B = await customer();
    a.liveMessage = await created(A.live, '/messages', textMessage('iso-live'), 'messageId');
    a.sandboxMessage = await created(A.sandbox, '/messages', textMessage('iso-sandbox'), 'messageId');
    a.broadcast = await created(
      A.live,
      '/messages/broadcast',
      {
        externalId: 'iso-broadcast',
        content: { type: 'text', text: 'Hi' },
        recipients: [{ phoneE164: '+16505550110' }],
      },
      'broadcastId',
    );
    a.broadcastMessage = (await api(A.live, 'GET', `/messages?broadcastId=${a.broadcast}`)).body.messages[0].messageId;
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['message.status'] };
    a.liveEndpoint = await created(A.live, '/webhook-endpoints', hook, 'id');
    a.sandboxEndpoint = await created(A.sandbox, '/webhook-endpoints', hook, 'id');
    const rule = (name: string) => ({
      name,
      condition: { type: 'contains', pattern: 'never matches this' },
      destination: { type: 'http', url: 'http://127.0.0.1:9/rule' },
    });
    a.liveRule = await created(A.live, '/forwarding-rules', rule('live'), 'id');
    a.sandboxRule = await created(A.sandbox, '/forwarding-rules', rule('sandbox'), 'id');
    expect(
      (await api(A.live, 'POST', `/chat-accounts/${A.accountId}/suppressions`, { phone: SUPPRESSED })).status,
    ).toBe(201);
    const res = await fetch(`${emu.url}/__emulator/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phoneNumberId: A.phoneNumberId, from: SENDER, text: 'hello', name: 'Ann' }),
    });
    expect((await res.json()).delivered).toBe(true);
    a.inbound = await eventually(async () => {
      const list = await api(A.live, 'GET', '/inbound-messages');
      return list.body.inboundMessages?.[0]?.inboundMessageId as string | undefined;
    });
  });
  afterAll(() => stop?.());

  /** What one key reads of every list (ids), and of usage and the sender lookup. */
  const lists = async (key: string, account: string) => {
    const ids = async (path: string, field: string, id: string) => {
      const res = await api(key, 'GET', path);
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
      return (res.body[field] as Record<string, string>[]).map((x) => x[id]!).sort();
    };
    const usage = (await api(key, 'GET', '/usage')).body;
    const sender = (await api(key, 'GET', `/inbound-senders/${encodeURIComponent(SENDER)}`)).body;
    return {
      messages: await ids('/messages?limit=100', 'messages', 'messageId'),
      broadcasts: await ids('/broadcasts', 'broadcasts', 'broadcastId'),
      endpoints: await ids('/webhook-endpoints', 'webhookEndpoints', 'id'),
      rules: await ids('/forwarding-rules', 'forwardingRules', 'id'),
      inbound: await ids('/inbound-messages', 'inboundMessages', 'inboundMessageId'),
      suppressions: await ids(`/chat-accounts/${account}/suppressions`, 'suppressions', 'phone'),
      used: usage.used as number,
      accepted: (usage.byAccount as { accepted: number }[]).reduce((n, x) => n + x.accepted, 0),
      senderWritten: sender.hasWritten as boolean,
    };
  };

  it("A's live key lists A's live data and A's sandbox messages", async () => {
    expect(await lists(A.live, A.accountId)).toEqual({
      messages: [a.liveMessage, a.sandboxMessage, a.broadcastMessage].sort(),
      broadcasts: [a.broadcast],
      endpoints: [a.liveEndpoint],
      rules: [a.liveRule],
      inbound: [a.inbound],
      suppressions: [SUPPRESSED],
      used: 2,
      accepted: 2,
      senderWritten: true,
    });
  });

  it("A's sandbox key lists only A's sandbox data", async () => {
    expect(await lists(A.sandbox, A.accountId)).toEqual({
      messages: [a.sandboxMessage],
      broadcasts: [],
      endpoints: [a.sandboxEndpoint],
      rules: [a.sandboxRule],
      inbound: [],
      suppressions: [],
      used: 0,
      accepted: 0,
      senderWritten: false,
    });
  });

  it("B's live and sandbox keys list nothing of A's", async () => {
    for (const key of [B.live, B.sandbox])
      expect(await lists(key, B.accountId)).toEqual({
        messages: [],
        broadcasts: [],
        endpoints: [],
        rules: [],
        inbound: [],
        suppressions: [],
        used: 0,
        accepted: 0,
        senderWritten: false,
      });
  });

  it("every get of A's ids is not found for B's keys, and for A's sandbox key where the id is live", async () => {
    const notFound = (path: string, error: string) => ({ path, status: 404, body: { error } });
    const gets: [string, string][] = [
      [`/messages/${a.liveMessage}`, 'message_not_found'],
      [`/messages/${a.sandboxMessage}`, 'message_not_found'],
      [`/broadcasts/${a.broadcast}`, 'broadcast_not_found'],
      [`/webhook-endpoints/${a.liveEndpoint}`, 'webhook_endpoint_not_found'],
      [`/webhook-endpoints/${a.sandboxEndpoint}`, 'webhook_endpoint_not_found'],
      [`/webhook-endpoints/${a.liveEndpoint}/deliveries`, 'webhook_endpoint_not_found'],
      [`/forwarding-rules/${a.liveRule}`, 'forwarding_rule_not_found'],
      [`/forwarding-rules/${a.sandboxRule}`, 'forwarding_rule_not_found'],
      [`/inbound-messages/${a.inbound}`, 'inbound_message_not_found'],
      [`/inbound-messages/${a.inbound}/media`, 'inbound_message_not_found'],
      [`/chat-accounts/${A.accountId}/suppressions`, 'account_not_found'],
    ];
    for (const key of [B.live, B.sandbox])
      for (const [path, error] of gets) {
        const res = await api(key, 'GET', path);
        expect({ path, status: res.status, body: { error: res.body?.error } }).toEqual(notFound(path, error));
      }
    const liveOnes = gets.filter(([path]) =>
      [a.liveMessage, a.broadcast, a.liveEndpoint, a.liveRule, a.inbound].some((id) => path.includes(id)),
    );
    for (const [path, error] of liveOnes) {
      const res = await api(A.sandbox, 'GET', path);
      expect({ path, status: res.status, body: { error: res.body?.error } }).toEqual(notFound(path, error));
    }
    // Controls: each id is found by the key whose world it is in.
    for (const [key, path] of [
      [A.live, `/messages/${a.sandboxMessage}`],
      [A.sandbox, `/messages/${a.sandboxMessage}`],
      [A.live, `/broadcasts/${a.broadcast}`],
      [A.live, `/webhook-endpoints/${a.liveEndpoint}`],
      [A.sandbox, `/webhook-endpoints/${a.sandboxEndpoint}`],
      [A.live, `/forwarding-rules/${a.liveRule}`],
      [A.sandbox, `/forwarding-rules/${a.sandboxRule}`],
      [A.live, `/inbound-messages/${a.inbound}`],
    ] as const)
      expect({ path, status: (await api(key, 'GET', path)).status }).toEqual({ path, status: 200 });
  });
});
