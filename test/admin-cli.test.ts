import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { ADMIN_TOKEN, call, createAccount, eventually, type Service, startService } from './support/harness.js';

const run = promisify(execFile);

describe('chatgate admin', () => {
  let svc: Service;
  const admin = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, chatgateArgs('admin', ...args), {
        env: { ...process.env, CHATGATE_URL: svc.url, ADMIN_TOKEN },
      });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: e.stdout + e.stderr };
    }
  };
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  it('creates a customer, an account and keys, and revokes a key, over the operator API', async () => {
    const customer = JSON.parse(
      (await admin('customers', 'create', '--name', 'Cli Co', '--plan', 'starter', '--default-country', 'GB')).out,
    );
    expect(customer).toMatchObject({ name: 'Cli Co', plan: 'starter', defaultCountry: 'GB' });
    const account = JSON.parse(
      (
        await admin(
          'accounts',
          'create',
          customer.id,
          '--type',
          'OFFICIAL',
          '--phone',
          '+447700900123',
          '--display-name',
          'Cli',
          '--phone-number-id',
          'cli-pn-1',
          '--waba-id',
          'w',
          '--access-token',
          'secret-token',
          '--send-policy',
          'TEST',
          '--test-recipient',
          '+447700900001',
          '--test-recipient',
          '+447700900002',
          // No provider here: unchecked, the account would wait AUTHENTICATING (account-verify.test.ts).
          '--no-verify',
        )
      ).out,
    );
    expect(account).toMatchObject({ type: 'OFFICIAL', sendPolicy: { mode: 'TEST', testRecipientsCount: 2 } });
    const grouped = JSON.parse(
      (await admin('accounts', 'update', account.id, '--portfolio', 'biz-cli', '--messaging-limit', '2000')).out,
    );
    expect(grouped).toMatchObject({ portfolioId: 'biz-cli', messagingLimit: { limit: 2000, source: 'operator' } });
    const alone = JSON.parse(
      (await admin('accounts', 'update', account.id, '--portfolio', 'none', '--messaging-limit', 'unlimited')).out,
    );
    expect(alone).toMatchObject({ portfolioId: null, messagingLimit: { limit: null, tier: 'TIER_UNLIMITED' } });
    const key = JSON.parse(
      (await admin('keys', 'create', customer.id, '--account', account.id, '--template-access', 'read')).out,
    );
    expect(key.key).toMatch(/^ak_live_/);
    expect((await call(svc.url, 'GET', '/chat-accounts', { key: key.key })).status).toBe(200);
    const listed = JSON.parse((await admin('keys', 'list', customer.id, '--json')).out);
    expect(listed.apiKeys[0]).toMatchObject({ id: key.id, chatAccountId: account.id, templateAccess: 'read' });
    expect((await admin('keys', 'revoke', key.id)).code).toBe(0);
    expect((await call(svc.url, 'GET', '/chat-accounts', { key: key.key })).status).toBe(401);
  });

  it('lists customers, accounts and usage as tables for people and as JSON for scripts', async () => {
    const tag = `cli${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (const [name, plan] of [
      [`One ${tag}`, 'pro'],
      [`Two ${tag}`, 'basic'],
      [`Three ${tag}`, 'pro'],
    ] as const)
      ids.push(JSON.parse((await admin('customers', 'create', '--name', name, '--plan', plan)).out).id);

    const table = await admin('customers', 'list', '--search', tag.toUpperCase(), '--plan', 'pro');
    expect(table.code).toBe(0);
    const lines = table.out.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +PLAN +COUNTRY +CREATED$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual([
      [ids[2], `Three ${tag}`, 'pro', '-'],
      [ids[0], `One ${tag}`, 'pro', '-'],
    ]);
    const paged = await admin('customers', 'list', '--search', tag, '--limit', '2');
    expect(paged.out).toMatch(/\(more: --cursor [A-Za-z0-9_-]+, or --all\)/);
    const json = JSON.parse((await admin('customers', 'list', '--search', tag, '--limit', '1', '--all', '--json')).out);
    expect(json.customers.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
    expect(json.nextCursor).toBeNull();

    await createAccount(svc.url, ids[0]!, { phoneNumber: '+15550100201', displayName: 'Support line' });
    const accounts = await admin('accounts', 'list', ids[0]!);
    expect(accounts.code).toBe(0);
    expect(accounts.out).toMatch(/^ID +TYPE +STATUS +PHONE +NAME +PHONE NUMBER ID +POLICY +MPS +ERROR +NEXT PROBE$/m);
    expect(accounts.out).toMatch(/OFFICIAL +CONNECTED +\+15550100201 +Support line +pn\S+ +PRODUCTION +80 +-/);
    const accountsJson = JSON.parse((await admin('accounts', 'list', ids[0]!, '--json')).out);
    expect(accountsJson).toMatchObject({ chatAccounts: [{ customerId: ids[0], displayName: 'Support line' }] });

    const month = new Date().toISOString().slice(0, 7);
    const usage = await admin('usage', ids[1]!);
    expect(usage.code).toBe(0);
    expect(usage.out).toMatch(new RegExp(`^month +${month}$`, 'm'));
    expect(usage.out).toMatch(/^limit +10000$/m);
    expect(usage.out).toMatch(/^remaining +10000$/m);
    expect(JSON.parse((await admin('usage', ids[1]!, '--month', '2021-02', '--json')).out)).toMatchObject({
      month: '2021-02',
      plan: 'basic',
      used: 0,
      resetsAt: '2021-03-01T00:00:00.000Z',
    });
    const keys = await admin('keys', 'list', ids[0]!);
    expect(keys.out).toMatch(/^ID +KEY +NAME +SANDBOX +ACCOUNT +TEMPLATES +CREATED +REVOKED +LAST USED$/m);
    const get = await admin('customers', 'get', ids[0]!);
    expect(get.out).toMatch(new RegExp(`^usage +0 of 20000 in ${month}$`, 'm'));

    expect((await admin('usage')).code).toBe(2);
    expect((await admin('accounts', 'list')).code).toBe(2);
    const missing = await admin('usage', '00000000-0000-4000-8000-000000000000');
    expect(missing).toMatchObject({ code: 1 });
    expect(missing.out).toContain('not_found');
  }, 240_000);

  it('--quiet prints only the new id (keys create: the key), so commands chain; keys list shows the last use', async () => {
    const customerId = (
      await admin('customers', 'create', '--name', 'Quiet Co', '--plan', 'basic', '--quiet')
    ).out.trim();
    expect(customerId).toMatch(/^[0-9a-f-]{36}$/);
    const accountId = (
      await admin(
        'accounts',
        'create',
        customerId,
        '--type',
        'DIRECT',
        '--phone',
        '+15550100299',
        '--display-name',
        'Q',
        '-q',
      )
    ).out.trim();
    expect(accountId).toMatch(/^[0-9a-f-]{36}$/);
    const key = (await admin('keys', 'create', customerId, '--sandbox', '--quiet')).out.trim();
    expect(key).toMatch(/^ak_test_[0-9a-f]+$/);
    expect((await admin('keys', 'list', customerId)).out.split('\n')[1]).toMatch(/ -$/); // never used yet
    expect((await call(svc.url, 'GET', '/chat-accounts', { key })).body.accounts).toMatchObject([{ id: accountId }]);
    const used = await eventually(async () => {
      const table = (await admin('keys', 'list', customerId)).out;
      return /Z$/.test(table.split('\n')[1] ?? '') ? table : undefined;
    });
    expect(used.split('\n')[0]).toMatch(/LAST USED$/);
  });

  it('exits non-zero with the error body on a refused request, and with usage on a bad command', async () => {
    const bad = await admin('customers', 'create', '--name', 'x', '--plan', 'gold');
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('validation_error');
    const usage = await admin('keys', 'frobnicate');
    expect(usage.code).toBe(2);
    expect(usage.out).toContain('usage: chatgate admin');
  });
});
