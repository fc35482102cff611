import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN_TOKEN, call, type Service, startService } from './support/harness.js';

const run = promisify(execFile);

describe('chatgate admin', () => {
  let svc: Service;
  const admin = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'admin', ...args], {
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
        )
      ).out,
    );
    expect(account).toMatchObject({ type: 'OFFICIAL', sendPolicy: { mode: 'TEST', testRecipientsCount: 2 } });
    const key = JSON.parse(
      (await admin('keys', 'create', customer.id, '--account', account.id, '--template-access', 'read')).out,
    );
    expect(key.key).toMatch(/^ak_live_/);
    expect((await call(svc.url, 'GET', '/chat-accounts', { key: key.key })).status).toBe(200);
    const listed = JSON.parse((await admin('keys', 'list', customer.id)).out);
    expect(listed.apiKeys[0]).toMatchObject({ id: key.id, chatAccountId: account.id, templateAccess: 'read' });
    expect((await admin('keys', 'revoke', key.id)).code).toBe(0);
    expect((await call(svc.url, 'GET', '/chat-accounts', { key: key.key })).status).toBe(401);
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
