// Linking an OFFICIAL account with `?verify=true` (what `chatgate admin accounts create|update`
// asks for unless --no-verify): the provider reads the phone number with the token first, as the
// account prober does. A rejected token is refused with a 400 on official.accessToken and nothing
// is saved; a provider that cannot be asked links the account as AUTHENTICATING (never CONNECTED;
// the prober connects it once the provider accepts the token, decision 0072) and says so (the CLI:
// exit 3); without the flag the operator API is as before.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { chatgateArgs } from './support/cli-build.js';
import { type Emulator, startLiveService } from './support/emulator.js';
import { ADMIN_TOKEN, call, eventually, type Service, startService } from './support/harness.js';

const run = promisify(execFile);
const TOKEN = 'EAAG-verify-right-token';

describe('credential check when an account is linked or its token changes', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let offline: Service;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
    offline = await startService({ role: 'api' }); // PROVIDER_BASE_URL points at nothing
  });
  afterAll(async () => {
    await stop();
    await offline.stop();
  });

  const customer = async (url: string) =>
    (await call(url, 'POST', '/admin/customers', { admin: true, body: { name: 'Verify', plan: 'pro' } })).body
      .id as string;
  const account = (phoneNumberId: string, accessToken: string) => ({
    type: 'OFFICIAL',
    phoneNumber: '+15550100200',
    displayName: 'Verify',
    official: { phoneNumberId, wabaId: 'w1', accessToken },
  });
  const number = async () => {
    const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
    await emu.number(pn, { accessToken: TOKEN });
    return pn;
  };

  it('refuses a token the provider rejects, and links one it accepts', async () => {
    const customerId = await customer(svc.url);
    const pn = await number();
    const bad = await call(svc.url, 'POST', `/admin/customers/${customerId}/chat-accounts?verify=true`, {
      admin: true,
      body: account(pn, 'EAAG-wrong-token'),
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: 'validation_error',
      details: [{ path: 'official.accessToken', message: expect.stringContaining('rejected this access token') }],
    });
    const listed = await call(svc.url, 'GET', `/admin/customers/${customerId}/chat-accounts`, { admin: true });
    expect(listed.body.chatAccounts).toEqual([]);

    const good = await call(svc.url, 'POST', `/admin/customers/${customerId}/chat-accounts?verify=true`, {
      admin: true,
      body: account(pn, TOKEN),
    });
    expect(good.status).toBe(201);
    expect(good.body).toMatchObject({ status: 'CONNECTED', credentialCheck: { result: 'verified', detail: null } });

    // A changed token is checked too; a refused change leaves the account as it was.
    const patch = (token: string) =>
      call(svc.url, 'PATCH', `/admin/chat-accounts/${good.body.id}?verify=true`, {
        admin: true,
        body: { official: { accessToken: token } },
      });
    expect((await patch('EAAG-another-wrong-token')).status).toBe(400);
    expect((await patch(TOKEN)).body).toMatchObject({ credentialCheck: { result: 'verified' } });
  });

  it("takes the number's throughput level from the credential check (decision 0042)", async () => {
    const customerId = await customer(svc.url);
    const pn = await number();
    await emu.number(pn, { throughputMps: 1000 }); // read as HIGH
    const high = await call(svc.url, 'POST', `/admin/customers/${customerId}/chat-accounts?verify=true`, {
      admin: true,
      body: account(pn, TOKEN),
    });
    expect(high.status).toBe(201);
    expect(high.body).toMatchObject({ throughputMps: 1000, credentialCheck: { result: 'verified', detail: null } });
    expect(high.body.credentialCheck).not.toHaveProperty('level');
    // The level falls back (STANDARD): a token change with verify reads it again.
    await emu.number(pn, { throughputMps: 80 });
    const changed = await call(svc.url, 'PATCH', `/admin/chat-accounts/${high.body.id}?verify=true`, {
      admin: true,
      body: { official: { accessToken: TOKEN } },
    });
    expect(changed.body).toMatchObject({ throughputMps: 80, credentialCheck: { result: 'verified' } });
  });

  it('without verify=true the operator API links as before (no provider call)', async () => {
    const customerId = await customer(svc.url);
    const pn = await number();
    const before = emu.state.lookups.length;
    const res = await call(svc.url, 'POST', `/admin/customers/${customerId}/chat-accounts`, {
      admin: true,
      body: account(pn, 'EAAG-wrong-token'),
    });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('credentialCheck');
    expect(emu.state.lookups.length).toBe(before);
  });

  it('links the account and says so when the provider cannot be asked', async () => {
    const customerId = await customer(offline.url);
    const res = await call(offline.url, 'POST', `/admin/customers/${customerId}/chat-accounts?verify=true`, {
      admin: true,
      body: account('pn-offline', 'EAAG-any-token'),
    });
    expect(res.status).toBe(201);
    expect(res.body.credentialCheck).toMatchObject({ result: 'unverified', detail: expect.any(String) });
    // Never CONNECTED with a token nobody checked (decision 0072): it waits as AUTHENTICATING.
    expect(res.body).toMatchObject({ status: 'AUTHENTICATING' });
  });

  it('an account saved unverified is connected by the account prober once the provider accepts its token', async () => {
    const customerId = await customer(svc.url);
    const pn = await number();
    await emu.rule({ phoneNumberId: pn, to: 'lookup', httpStatus: 503, times: 1 }); // the check cannot get an answer
    const res = await call(svc.url, 'POST', `/admin/customers/${customerId}/chat-accounts?verify=true`, {
      admin: true,
      body: account(pn, TOKEN),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'AUTHENTICATING', credentialCheck: { result: 'unverified' } });
    await eventually(async () => {
      const list = await call(svc.url, 'GET', `/admin/customers/${customerId}/chat-accounts`, { admin: true });
      const a = list.body.chatAccounts.find((x: { id: string }) => x.id === res.body.id);
      return a?.status === 'CONNECTED' ? a : undefined;
    }, 90_000);
  }, 120_000);

  it('chatgate admin accounts create checks the token unless --no-verify', async () => {
    const customerId = await customer(svc.url);
    const pn = await number();
    const admin = (...args: string[]) =>
      run(process.execPath, chatgateArgs('admin', 'accounts', 'create', customerId, ...args), {
        env: { ...process.env, CHATGATE_URL: svc.url, ADMIN_TOKEN },
      }).then(
        (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
      );
    const common = ['--type', 'OFFICIAL', '--phone', '+15550100200', '--display-name', 'V', '--waba-id', 'w1'];
    const refused = await admin(...common, '--phone-number-id', pn, '--access-token', 'EAAG-wrong-token');
    expect(refused.code).toBe(1);
    // One line on stderr, never the raw JSON answer.
    expect(refused.err).toMatch(
      /^error: 400 validation_error: official\.accessToken the provider rejected this access token[^\n]*\n$/,
    );
    expect(refused.out).toBe('');
    const linked = await admin(...common, '--phone-number-id', pn, '--access-token', TOKEN, '--quiet');
    expect(linked).toMatchObject({ code: 0, out: expect.stringMatching(/^[0-9a-f-]{36}\n$/) });
    const pn2 = await number();
    const unchecked = await admin(...common, '--phone-number-id', pn2, '--access-token', 'EAAG-wrong', '--no-verify');
    expect(unchecked.code).toBe(0);
  });

  it('chatgate admin accounts create: a token that could not be checked is saved AUTHENTICATING, exit 3', async () => {
    const customerId = await customer(offline.url);
    const r = await run(
      process.execPath,
      chatgateArgs('admin', 'accounts', 'create', customerId, '--type', 'OFFICIAL', '--phone', '+15550100200')
        .concat(['--display-name', 'U', '--waba-id', 'w1', '--phone-number-id', 'pn-unverified'])
        .concat(['--access-token', 'EAAG-any', '--quiet']),
      { env: { ...process.env, CHATGATE_URL: offline.url, ADMIN_TOKEN } },
    ).then(
      () => ({ code: 0, out: '', err: '' }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
    );
    expect(r.code).toBe(3);
    expect(r.out).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(r.err).toMatch(/^chatgate admin accounts create: saved as AUTHENTICATING, not CONNECTED: [^\n]*\n$/);
    const list = await call(offline.url, 'GET', `/admin/customers/${customerId}/chat-accounts`, { admin: true });
    expect(list.body.chatAccounts).toMatchObject([{ id: r.out.trim(), status: 'AUTHENTICATING' }]);
  });
});
