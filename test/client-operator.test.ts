// ChatGateOperator of @chatgate/client (imported from its source) against the real service: every
// operation of the operator API, its lists as async iterators, and its errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChatGate, ChatGateOperator, type ChatGateOperatorOptions } from '../packages/client/src/index.js';
import { checkedFetch } from './support/checked-fetch.js';
import { ADMIN_TOKEN, eventually, type Service, startService } from './support/harness.js';

describe('ChatGateOperator', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const operator = (extra: Partial<ChatGateOperatorOptions> = {}) =>
    new ChatGateOperator({
      adminToken: ADMIN_TOKEN,
      baseUrl: svc.url,
      retryDelayMs: 10,
      fetch: checkedFetch,
      ...extra,
    });

  it('creates, finds, pages through and updates customers, and reads their usage', async () => {
    const op = operator();
    const tag = `Operator client ${Date.now()}`;
    const first = await op.createCustomer({ name: `${tag} A`, plan: 'pro', defaultCountry: 'US' });
    const second = await op.createCustomer({ name: `${tag} B`, plan: 'basic' });
    expect(first).toMatchObject({ name: `${tag} A`, plan: 'pro', defaultCountry: 'US' });

    const page = await op.listCustomers({ q: tag, limit: 1 });
    expect(page.customers.map((c) => c.id)).toEqual([second.id]); // newest first
    expect(page.nextCursor).toEqual(expect.any(String));
    const all = [];
    for await (const c of op.iterateCustomers({ q: tag, limit: 1 })) all.push(c.id);
    expect(all).toEqual([second.id, first.id]);
    const basic = [];
    for await (const c of op.iterateCustomers({ q: tag, plan: 'basic' })) basic.push(c.id);
    expect(basic).toEqual([second.id]);

    expect(await op.getCustomer(first.id)).toMatchObject({ id: first.id, usage: { used: 0 } });
    expect(await op.updateCustomer(first.id, { plan: 'starter', name: `${tag} A2` })).toMatchObject({
      plan: 'starter',
      name: `${tag} A2`,
    });
    const usage = await op.getCustomerUsage(first.id);
    expect(usage).toMatchObject({ customerId: first.id, plan: 'starter', used: 0 });
    expect((await op.getCustomerUsage(first.id, { month: usage.month })).month).toBe(usage.month);
  });

  it('links and updates chat accounts, makes, lists and revokes keys, and ingests an inbound message', async () => {
    const op = operator();
    const customer = await op.createCustomer({ name: 'Accounts Co', plan: 'pro' });
    const account = await op.linkChatAccount(customer.id, {
      type: 'OFFICIAL',
      phoneNumber: '+15550100300',
      displayName: 'Operator client',
      official: { phoneNumberId: `pn-client-${Date.now()}`, wabaId: 'waba1', accessToken: 'EAAG-client-token' },
    });
    expect(account).toMatchObject({ customerId: customer.id, displayName: 'Operator client' });
    const other = await op.linkChatAccount(customer.id, {
      type: 'DIRECT',
      phoneNumber: '+15550100301',
      displayName: 'Second',
    });
    expect((await op.listCustomerChatAccounts(customer.id)).chatAccounts.map((a) => a.id)).toEqual([
      other.id,
      account.id,
    ]);
    const paged = [];
    for await (const a of op.iterateCustomerChatAccounts(customer.id, { limit: 1 })) paged.push(a.id);
    expect(paged).toEqual([other.id, account.id]);
    expect(await op.updateChatAccount(account.id, { displayName: 'Renamed' })).toMatchObject({
      id: account.id,
      displayName: 'Renamed',
    });

    const key = await op.createApiKey(customer.id, { name: 'client', sandbox: false });
    expect(key.key).toMatch(/^ak_live_/);
    expect((await op.listApiKeys(customer.id)).map((k) => k.id)).toEqual([key.id]);
    const keys = [];
    for await (const k of op.iterateApiKeys(customer.id)) keys.push(k);
    expect(keys.map((k) => [k.id, 'key' in k])).toEqual([[key.id, false]]);
    const cg = new ChatGate({ apiKey: key.key!, baseUrl: svc.url, fetch: checkedFetch });
    expect((await cg.listChatAccounts()).map((a) => a.id).sort()).toEqual([account.id, other.id].sort());

    const inbound = { providerMessageId: `wamid.client-${Date.now()}`, from: '+15551230400', text: 'Hello' };
    expect(await op.ingestInboundMessage(account.id, inbound)).toEqual({ ingested: true, duplicate: false });
    expect(await op.ingestInboundMessage(account.id, inbound)).toMatchObject({ duplicate: true });
    const received = await eventually(async () => {
      const inbox = await cg.listInboundMessages({ chatAccountId: account.id });
      return inbox.inboundMessages.length > 0 && inbox.inboundMessages;
    });
    expect(received).toEqual([expect.objectContaining({ from: '+15551230400', text: 'Hello' })]);

    await op.revokeApiKey(key.id);
    await expect(cg.listChatAccounts()).rejects.toMatchObject({ status: 401 });
  });

  it('invites, lists, resets and disables portal users; rekeys; reads the provider settings', async () => {
    const op = operator();
    const customer = await op.createCustomer({ name: 'Portal Co', plan: 'pro' });
    const invited = await op.createPortalUser(customer.id, { email: `owner-${Date.now()}@example.com` });
    expect(invited).toMatchObject({ invitationUrl: expect.stringContaining('http'), expiresAt: expect.any(String) });
    expect((await op.listPortalUsers(customer.id)).map((u) => u.id)).toEqual([invited.id]);
    const users = [];
    for await (const u of op.iteratePortalUsers(customer.id)) users.push(u.id);
    expect(users).toEqual([invited.id]);
    const reset = await op.resetPortalUserPassword(invited.id);
    expect(reset.invitationUrl).not.toBe(invited.invitationUrl);
    const disabled = await op.disablePortalUser(invited.id);
    expect(disabled.id).toBe(invited.id);
    expect(await op.disablePortalUser(invited.id)).toEqual(disabled);

    expect(await op.rekey()).toMatchObject({ keyId: expect.any(String), remaining: 0 });
    const provider = await op.getProviderSettings();
    expect(provider.apiVersion).toMatch(/^v\d+\.\d+$/);
    expect(provider.versions.map((v) => v.version)).toContain(provider.apiVersion);
  });

  it('throws ChatGateError: the wrong token, an unknown id, a validation problem', async () => {
    await expect(operator({ adminToken: 'not-the-token' }).listCustomers()).rejects.toMatchObject({
      status: 401,
      error: 'unauthorized',
    });
    const op = operator();
    await expect(op.getCustomer('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      status: 404,
      error: 'not_found',
    });
    const invalid = await op.createCustomer({ name: 'x', plan: 'gold' as 'pro' }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, error: 'validation_error' });
    expect(() => new ChatGateOperator({ adminToken: '' })).toThrow(/adminToken is required/);
  });
});
