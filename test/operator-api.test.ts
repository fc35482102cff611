import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sha256Hex } from '../src/shared/crypto.js';
import { call, createAccount, createTenant, type Service, startService } from './support/harness.js';

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
      expect(v).toMatch(/^v1\./);
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
