import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sha256Hex } from '../src/shared/crypto.js';
import { call, createAccount, createTenant, type Service, startService, textMessage } from './support/harness.js';

describe('operator API', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('refuses a missing or wrong admin token', async () => {
    expect(await call(svc.url, 'POST', '/admin/customers', { body: { name: 'x', plan: 'pro' } })).toMatchObject({
      status: 401,
      body: { error: 'unauthorized' },
    });
    const wrong = await call(svc.url, 'POST', '/admin/customers', {
      body: { name: 'x', plan: 'pro' },
      headers: { authorization: 'Bearer wrong-token-wrong-token' },
    });
    expect(wrong.status).toBe(401);
  });

  it('error bodies say what to do: the 401s keep their sentence and add a message; not_found names the resource', async () => {
    const none = await call(svc.url, 'GET', '/chat-accounts');
    expect(none).toMatchObject({ status: 401, body: { error: 'Missing x-api-key header' } });
    expect(none.body.message).toMatch(/x-api-key header/);
    const bad = await call(svc.url, 'GET', '/chat-accounts', { key: 'ak_live_nope' });
    expect(bad).toMatchObject({ status: 401, body: { error: 'Invalid API key' } });
    expect(bad.body.message).toMatch(/unknown or revoked.*create a new one/);
    const operator = await call(svc.url, 'GET', '/admin/customers');
    expect(operator).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(operator.body.message).toMatch(/Authorization: Bearer <ADMIN_TOKEN>/);

    const nobody = '00000000-0000-4000-8000-000000000000';
    const notFound = async (method: string, path: string, resource: string, body?: unknown) =>
      expect(await call(svc.url, method, path, { admin: true, body })).toMatchObject({
        status: 404,
        body: { error: 'not_found', resource, message: `${resource} not found` },
      });
    await notFound('GET', `/admin/customers/${nobody}`, 'customer');
    await notFound('PATCH', `/admin/customers/${nobody}`, 'customer', { name: 'x' });
    await notFound('POST', `/admin/customers/${nobody}/api-keys`, 'customer', {});
    await notFound('PATCH', `/admin/chat-accounts/${nobody}`, 'chat account', { displayName: 'x' });
    await notFound('DELETE', `/admin/api-keys/${nobody}`, 'API key');
    await notFound('POST', `/admin/portal-users/${nobody}/disable`, 'portal user');
  });

  it('creates and changes customers, validating plan and country', async () => {
    const created = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Acme', plan: 'starter', defaultCountry: 'DE' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Acme', plan: 'starter', defaultCountry: 'DE' });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: '', plan: 'gold', defaultCountry: 'xx' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('validation_error');
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['defaultCountry', 'name', 'plan']);
    const unknownCountry = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'a', plan: 'free', defaultCountry: 'ZZ' },
    });
    expect(unknownCountry.body.details).toEqual([
      { path: 'defaultCountry', message: 'is not a country with known phone numbering' },
    ]);
    const patched = await call(svc.url, 'PATCH', `/admin/customers/${created.body.id}`, {
      admin: true,
      body: { plan: 'pro', defaultCountry: null },
    });
    expect(patched).toMatchObject({ status: 200, body: { plan: 'pro', defaultCountry: null, name: 'Acme' } });
    expect(
      (
        await call(svc.url, 'PATCH', '/admin/customers/00000000-0000-4000-8000-000000000000', {
          admin: true,
          body: { plan: 'pro' },
        })
      ).status,
    ).toBe(404);
  });

  it('links accounts with sealed provider secrets that are never returned', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const res = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: {
        type: 'OFFICIAL',
        phoneNumber: '+15550009999',
        displayName: 'Support',
        official: {
          phoneNumberId: 'pnid-sealed-1',
          wabaId: 'w1',
          accessToken: 'EAAG-very-secret',
          appSecret: 'app-secret-value',
          integrationId: 'int-1',
          managementToken: 'mgmt-secret',
        },
        sendPolicy: { mode: 'TEST', testRecipients: ['+15551112222', '+15551113333'] },
      },
    });
    expect(res.status).toBe(201);
    const text = JSON.stringify(res.body);
    for (const secret of ['EAAG-very-secret', 'app-secret-value', 'mgmt-secret', '+15551112222'])
      expect(text).not.toContain(secret);
    expect(res.body).toMatchObject({
      type: 'OFFICIAL',
      status: 'CONNECTED',
      channel: 'chat_official',
      sendPolicy: { mode: 'TEST', testRecipientsCount: 2 },
      webhook: { integrationId: 'int-1', callbackUrl: 'https://chatgate.test/provider/webhooks/integrations/int-1' },
    });
    const [row] = await svc.db.query<Record<string, string>>(
      'SELECT access_token_enc, app_secret_enc, management_token_enc FROM chat_accounts WHERE id = $1',
      [res.body.id],
    );
    for (const v of Object.values(row!)) {
      expect(v).toMatch(/^v2\.[0-9a-f]{16}\./);
      expect(v).not.toContain('secret');
    }
    const dup = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: {
        type: 'OFFICIAL',
        phoneNumber: '+15550009998',
        displayName: 'Dup',
        official: { phoneNumberId: 'pnid-sealed-1', wabaId: 'w', accessToken: 't' },
      },
    });
    expect(dup).toMatchObject({ status: 409, body: { error: 'already_exists' } });
    const patched = await call(svc.url, 'PATCH', `/admin/chat-accounts/${res.body.id}`, {
      admin: true,
      body: { status: 'DISCONNECTED', sendPolicy: { mode: 'PRODUCTION' } },
    });
    expect(patched).toMatchObject({
      status: 200,
      body: { status: 'DISCONNECTED', sendPolicy: { mode: 'PRODUCTION' } },
    });
  });

  it('requires the official fields for OFFICIAL accounts and refuses them on DIRECT ones', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const missing = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: { type: 'OFFICIAL', phoneNumber: '+15550001234', displayName: 'x' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { path: string }) => d.path)).toEqual([
      'official.phoneNumberId',
      'official.wabaId',
      'official.accessToken',
    ]);
    const direct = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: { type: 'DIRECT', phoneNumber: '+15550001234', displayName: 'x', sendPolicy: { mode: 'TEST' } },
    });
    expect(direct.status).toBe(400);
    const ok = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: { type: 'DIRECT', phoneNumber: '+15550001234', displayName: 'x' },
    });
    expect(ok).toMatchObject({
      status: 201,
      body: { type: 'DIRECT', channel: 'chat_direct', official: null, sendPolicy: null, webhook: null },
    });
  });

  it('holds the plan account limit', async () => {
    const t = await createTenant(svc.url, { plan: 'free' });
    const second = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
      admin: true,
      body: {
        type: 'OFFICIAL',
        phoneNumber: '+15550001000',
        displayName: 'x',
        official: { phoneNumberId: `pn-limit-${Date.now()}`, wabaId: 'w', accessToken: 't' },
      },
    });
    expect(second).toMatchObject({ status: 409, body: { error: 'limit_reached' } });
  });

  it('holds each plan account limit exactly: Free 1, Starter 1, Basic 3, Pro 5', async () => {
    const limits: [string, number][] = [
      ['free', 1],
      ['starter', 1],
      ['basic', 3],
      ['pro', 5],
    ];
    for (const [plan, max] of limits) {
      const t = await createTenant(svc.url, { plan, accounts: max }); // up to the limit: all created
      expect(t.accountIds, plan).toHaveLength(max);
      const listed = (await call(svc.url, 'GET', '/chat-accounts', { key: t.key })).body.accounts;
      expect(listed, plan).toHaveLength(max);
      const over = await call(svc.url, 'POST', `/admin/customers/${t.customerId}/chat-accounts`, {
        admin: true,
        body: {
          type: 'OFFICIAL',
          phoneNumber: '+15550001000',
          displayName: 'one too many',
          official: { phoneNumberId: `pn-over-${plan}-${Date.now()}`, wabaId: 'w', accessToken: 't' },
        },
      });
      expect(over, plan).toMatchObject({ status: 409, body: { error: 'limit_reached' } });
      expect((await call(svc.url, 'GET', '/chat-accounts', { key: t.key })).body.accounts, plan).toHaveLength(max);
    }
  });

  it('creates 72-character keys stored only as hash and sealed copy, at most 5 active', async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Keys', plan: 'basic' },
    });
    const id = customer.body.id as string;
    const live = await call(svc.url, 'POST', `/admin/customers/${id}/api-keys`, {
      admin: true,
      body: { name: 'prod' },
    });
    expect(live.status).toBe(201);
    expect(live.body.key).toMatch(/^ak_live_[0-9a-f]{64}$/);
    expect(live.body.key).toHaveLength(72);
    const test = await call(svc.url, 'POST', `/admin/customers/${id}/api-keys`, {
      admin: true,
      body: { sandbox: true, templateAccess: 'read' },
    });
    expect(test.body.key).toMatch(/^ak_test_/);
    expect(test.body).toMatchObject({ sandbox: true, templateAccess: 'read', chatAccountId: null });
    const [row] = await svc.db.query<{ key_hash: string; key_enc: string }>(
      'SELECT key_hash, key_enc FROM api_keys WHERE id = $1',
      [live.body.id],
    );
    expect(row!.key_hash).toBe(sha256Hex(live.body.key));
    expect(row!.key_enc).not.toContain(live.body.key.slice(8));
    for (let i = 0; i < 3; i++)
      expect((await call(svc.url, 'POST', `/admin/customers/${id}/api-keys`, { admin: true, body: {} })).status).toBe(
        201,
      );
    expect(await call(svc.url, 'POST', `/admin/customers/${id}/api-keys`, { admin: true, body: {} })).toMatchObject({
      status: 409,
      body: { error: 'limit_reached' },
    });
    const list = await call(svc.url, 'GET', `/admin/customers/${id}/api-keys`, { admin: true });
    expect(list.body.apiKeys).toHaveLength(5);
    expect(JSON.stringify(list.body)).not.toContain(live.body.key);
    expect(list.body.apiKeys[0].maskedKey).toBe(`ak_live_********${live.body.key.slice(-4)}`);
    expect((await call(svc.url, 'DELETE', `/admin/api-keys/${live.body.id}`, { admin: true })).status).toBe(204);
    expect((await call(svc.url, 'POST', `/admin/customers/${id}/api-keys`, { admin: true, body: {} })).status).toBe(
      201,
    );
  });

  it('scopes a key only to an account of the same customer', async () => {
    const a = await createTenant(svc.url);
    const b = await createTenant(svc.url);
    const foreign = await call(svc.url, 'POST', `/admin/customers/${a.customerId}/api-keys`, {
      admin: true,
      body: { chatAccountId: b.accountId },
    });
    expect(foreign).toMatchObject({ status: 422, body: { error: 'invalid_chat_account' } });
    const own = await call(svc.url, 'POST', `/admin/customers/${a.customerId}/api-keys`, {
      admin: true,
      body: { chatAccountId: a.accountId },
    });
    expect(own).toMatchObject({ status: 201, body: { chatAccountId: a.accountId } });
  });

  it('answers 404 for unknown ids', async () => {
    expect(
      (await call(svc.url, 'DELETE', '/admin/api-keys/00000000-0000-4000-8000-000000000000', { admin: true })).status,
    ).toBe(404);
    expect(
      (
        await call(svc.url, 'POST', '/admin/customers/00000000-0000-4000-8000-000000000000/chat-accounts', {
          admin: true,
          body: { type: 'DIRECT', phoneNumber: '+15550001234', displayName: 'x' },
        })
      ).status,
    ).toBe(404);
    expect(
      await createAccount(svc.url, (await createTenant(svc.url)).customerId).catch((e: Error) => e.message),
    ).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lists customers newest first with cursors, a name search and a plan filter', async () => {
    const tag = `find${crypto.randomBytes(4).toString('hex')}`;
    const make = async (name: string, plan: string) =>
      (await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name, plan } })).body.id as string;
    const a = await make(`Alpha ${tag}`, 'basic');
    const b = await make(`Beta ${tag.toUpperCase()}`, 'pro');
    const c = await make(`Gamma ${tag} 100%_off`, 'basic');
    await make('Someone else', 'basic');

    const first = await call(svc.url, 'GET', `/admin/customers?q=${tag}&limit=2`, { admin: true });
    expect(first.status).toBe(200);
    expect(first.body.customers.map((x: { id: string }) => x.id)).toEqual([c, b]);
    expect(first.body.customers[0]).toEqual({
      id: c,
      name: `Gamma ${tag} 100%_off`,
      plan: 'basic',
      defaultCountry: null,
      embeddedSignup: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(svc.url, 'GET', `/admin/customers?q=${tag}&limit=2&cursor=${first.body.nextCursor}`, {
      admin: true,
    });
    expect(second.body).toEqual({ customers: [expect.objectContaining({ id: a })], nextCursor: null });

    const pro = await call(svc.url, 'GET', `/admin/customers?q=${tag}&plan=pro`, { admin: true });
    expect(pro.body.customers.map((x: { id: string }) => x.id)).toEqual([b]);
    // % and _ are searched as themselves, not as wildcards.
    const literal = await call(svc.url, 'GET', `/admin/customers?q=${encodeURIComponent('0%_o')}`, { admin: true });
    expect(literal.body.customers.map((x: { id: string }) => x.id)).toEqual([c]);
    expect(
      (await call(svc.url, 'GET', `/admin/customers?q=${encodeURIComponent('%')}`, { admin: true })).body.customers,
    ).toEqual([expect.objectContaining({ id: c })]);
    const all = await call(svc.url, 'GET', '/admin/customers?limit=100', { admin: true });
    expect(all.body.customers.length).toBeGreaterThanOrEqual(4);

    expect(await call(svc.url, 'GET', '/admin/customers?cursor=nonsense', { admin: true })).toMatchObject({
      status: 400,
      body: { error: 'invalid_cursor' },
    });
    const bad = await call(svc.url, 'GET', '/admin/customers?plan=gold&limit=0', { admin: true });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['limit', 'plan']);
    expect((await call(svc.url, 'GET', '/admin/customers')).status).toBe(401);
  });

  it("lists a customer's chat accounts with cursors, without secrets", async () => {
    const t = await createTenant(svc.url, { plan: 'pro', accounts: 3 });
    const first = await call(svc.url, 'GET', `/admin/customers/${t.customerId}/chat-accounts?limit=2`, {
      admin: true,
    });
    expect(first.status).toBe(200);
    expect(first.body.chatAccounts).toHaveLength(2);
    const second = await call(
      svc.url,
      'GET',
      `/admin/customers/${t.customerId}/chat-accounts?limit=2&cursor=${first.body.nextCursor}`,
      { admin: true },
    );
    expect(second.body.nextCursor).toBeNull();
    const listed = [...first.body.chatAccounts, ...second.body.chatAccounts];
    expect(listed.map((x: { id: string }) => x.id)).toEqual([...t.accountIds].reverse());
    expect(listed[0]).toMatchObject({
      id: t.accountIds[2],
      customerId: t.customerId,
      type: 'OFFICIAL',
      status: 'CONNECTED',
      throughputMps: 80,
      official: { wabaId: 'waba1' },
      sendPolicy: { mode: 'PRODUCTION' },
    });
    expect(JSON.stringify(listed)).not.toContain('EAAG-secret-token');
    const none = await createTenant(svc.url, { plan: 'free', accounts: 0 });
    expect(
      (await call(svc.url, 'GET', `/admin/customers/${none.customerId}/chat-accounts`, { admin: true })).body,
    ).toEqual({
      chatAccounts: [],
      nextCursor: null,
    });
    expect(
      (
        await call(svc.url, 'GET', '/admin/customers/00000000-0000-4000-8000-000000000000/chat-accounts', {
          admin: true,
        })
      ).status,
    ).toBe(404);
  });

  it("answers a customer's quota use of this month or of a given month", async () => {
    const t = await createTenant(svc.url, { plan: 'starter' });
    for (const i of [1, 2, 3])
      expect((await call(svc.url, 'POST', '/messages', { key: t.key, body: textMessage(`u${i}`) })).status).toBe(201);
    expect((await call(svc.url, 'POST', '/messages', { key: t.sandboxKey, body: textMessage('sb') })).status).toBe(201);
    const now = new Date();
    const month = now.toISOString().slice(0, 7);
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    const usage = await call(svc.url, 'GET', `/admin/customers/${t.customerId}/usage`, { admin: true });
    expect(usage).toMatchObject({ status: 200 });
    expect(usage.body).toEqual({
      customerId: t.customerId,
      month,
      plan: 'starter',
      limit: 2000,
      used: 3,
      remaining: 1997,
      resetsAt,
    });
    expect(
      (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/usage?month=${month}`, { admin: true })).body.used,
    ).toBe(3);
    expect(
      (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/usage?month=2020-12`, { admin: true })).body,
    ).toMatchObject({ month: '2020-12', used: 0, remaining: 2000, resetsAt: '2021-01-01T00:00:00.000Z' });
    expect(
      (await call(svc.url, 'GET', `/admin/customers/${t.customerId}/usage?month=2020-13`, { admin: true })).status,
    ).toBe(400);
    expect(
      (await call(svc.url, 'GET', '/admin/customers/00000000-0000-4000-8000-000000000000/usage', { admin: true }))
        .status,
    ).toBe(404);
  });
});

describe('operator API switched off', () => {
  it('is absent when ADMIN_TOKEN is unset', async () => {
    const svc = await startService({ role: 'api', env: { ADMIN_TOKEN: '' } });
    try {
      const res = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'x', plan: 'pro' } });
      expect(res).toMatchObject({ status: 404, body: { error: 'not_found' } });
    } finally {
      await svc.stop();
    }
  });
});
