// Self-serve linking with the provider's Embedded Signup (issue #35 item 3, decision 0076), through
// the emulator: what the provider's JS SDK gives a page (the login's code, the session's WABA and
// number ids) posted to POST /chat-accounts/embedded-signup; the code exchanged once for a business
// token (sealed at rest, then used for sends), our app subscribed to the WABA, the number registered
// with the PIN; each provider refusal names its step and links nothing; the operator's switches
// (per plan, per customer); sandbox and scoped keys refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, providerEnv, resetEmulator, startEmulator } from './support/emulator.js';
import { call, createKey, eventually, type Service, startService } from './support/harness.js';

describe('Embedded Signup', () => {
  let emu: Emulator;
  let svc: Service;

  beforeAll(async () => {
    emu = await startEmulator();
    svc = await startService({
      env: {
        ...providerEnv(emu),
        WORKER_POLL_MS: '50',
        EMBEDDED_SIGNUP_APP_ID: '1234567890',
        EMBEDDED_SIGNUP_CONFIG_ID: '987654321',
        EMBEDDED_SIGNUP_SDK_URL: `${emu.url}/__emulator/sdk.js`,
        EMBEDDED_SIGNUP_PLANS: 'basic,pro',
      },
    });
    await emu.settings({ callbackUrl: `${svc.url}/provider/webhooks/app` });
    await resetEmulator(emu, { statuses: ['sent'] });
  });
  afterAll(async () => {
    await svc?.stop();
    await emu?.stop();
  });

  const customer = async (plan = 'pro') => {
    const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'Self', plan } });
    return { customerId: c.body.id as string, key: await createKey(svc.url, c.body.id, {}) };
  };
  /** The customer finished the provider's flow: what the SDK gave the page. */
  const flow = async (s: Record<string, unknown> = {}) => {
    const res = await fetch(`${emu.url}/__emulator/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(s),
    });
    return (await res.json()) as { code: string; wabaId: string; phoneNumberId: string; businessId: string };
  };
  const session = async (code: string) => (await (await fetch(`${emu.url}/__emulator/signup/${code}`)).json()) as any;
  const link = (key: string, body: Record<string, unknown>) =>
    call(svc.url, 'POST', '/chat-accounts/embedded-signup', { key, body });
  const accounts = async (key: string) =>
    (await call(svc.url, 'GET', '/chat-accounts', { key })).body.accounts as Record<string, any>[];

  it('links the number: code exchanged, app subscribed, number registered, token sealed and used', async () => {
    const t = await customer();
    const f = await flow({ displayPhoneNumber: '+1 555-010-4477', verifiedName: 'Acme Parcels' });
    const res = await link(t.key, { code: f.code, wabaId: f.wabaId, phoneNumberId: f.phoneNumberId, pin: '123456' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      type: 'OFFICIAL',
      status: 'CONNECTED',
      phoneNumber: '+15550104477',
      displayName: 'Acme Parcels',
    });
    expect(await session(f.code)).toMatchObject({ exchanged: true, subscribed: true, registeredPin: '123456' });
    expect((await accounts(t.key)).map((a) => a.id)).toEqual([res.body.id]);

    // The business token is sealed at rest like every secret.
    const [row] = await svc.db.query<{ access_token_enc: string; management_token_enc: string; waba_id: string }>(
      'SELECT access_token_enc, management_token_enc, waba_id FROM chat_accounts WHERE id = $1',
      [res.body.id],
    );
    const token = emu.state.signups.get(f.code)!.accessToken;
    expect(row!.waba_id).toBe(f.wabaId);
    expect(JSON.stringify(row)).not.toContain(token);

    // Sends go out with it (the emulator takes only the number's own token).
    const sent = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: {
        externalId: 'es-1',
        chatAccountId: res.body.id,
        to: { type: 'phone', phoneE164: '+15551230000' },
        content: { type: 'text', text: 'Linked by ourselves' },
      },
    });
    expect(sent.status).toBe(201);
    await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${sent.body.messageId}`, { key: t.key })).body;
      return m.status === 'sent';
    });
    expect(emu.state.sent.find((s) => s.messageId === sent.body.messageId)?.phoneNumberId).toBe(f.phoneNumberId);

    // The app is subscribed to the WABA: the number's inbound messages reach us (the emulator sends
    // a signed-up number's webhooks only once subscribed_apps was called).
    const inbound = async (phoneNumberId: string) =>
      (await (
        await fetch(`${emu.url}/__emulator/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ phoneNumberId, from: '15551230000', text: 'Hello, new number' }),
        })
      ).json()) as { delivered: boolean };
    expect((await inbound(f.phoneNumberId)).delivered).toBe(true);
    const inbox = await eventually(async () => {
      const got = (await call(svc.url, 'GET', '/inbound-messages', { key: t.key })).body.inboundMessages as any[];
      return got.length === 1 && got;
    });
    expect(inbox[0]).toMatchObject({ chatAccountId: res.body.id, text: 'Hello, new number' });
    const notSubscribed = await flow();
    expect((await inbound(notSubscribed.phoneNumberId)).delivered).toBe(false);
  });

  it('a provider refusal names its step and links nothing: a spent code, a wrong PIN, an unknown code', async () => {
    const t = await customer();
    const f = await flow({ pin: '111111' });
    const body = { code: f.code, wabaId: f.wabaId, phoneNumberId: f.phoneNumberId, pin: '222222' };
    const wrongPin = await link(t.key, body);
    expect(wrongPin.status).toBe(422);
    expect(wrongPin.body).toMatchObject({ error: 'signup_failed', step: 'register_number' });
    expect(wrongPin.body.message).toContain('PIN Mismatch');
    const again = await link(t.key, { ...body, pin: '111111' });
    expect(again.status).toBe(422);
    expect(again.body).toMatchObject({ error: 'signup_failed', step: 'exchange_code' });
    expect(JSON.stringify(again.body)).not.toContain(f.code);
    const unknown = await link(t.key, { ...body, code: 'AQnot-a-code' });
    expect(unknown.body).toMatchObject({ error: 'signup_failed', step: 'exchange_code' });
    expect(await accounts(t.key)).toEqual([]);
    // A new run of the flow with the right PIN links it.
    const g = await flow({ pin: '111111' });
    const ok = await link(t.key, { code: g.code, wabaId: g.wabaId, phoneNumberId: g.phoneNumberId, pin: '111111' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it('requests are validated with the path; sandbox and scoped keys are refused', async () => {
    const t = await customer();
    const f = await flow();
    const bad = await link(t.key, { code: f.code, wabaId: f.wabaId, phoneNumberId: f.phoneNumberId, pin: '12ab' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { path: string }) => d.path)).toContain('pin');
    const body = { code: f.code, wabaId: f.wabaId, phoneNumberId: f.phoneNumberId, pin: '123456' };
    const sandbox = await link(await createKey(svc.url, t.customerId, { sandbox: true }), body);
    expect(sandbox.status).toBe(403);
    expect(sandbox.body.error).toBe('sandbox_not_supported');
    const linked = await link(t.key, body);
    expect(linked.status).toBe(201);
    const scoped = await createKey(svc.url, t.customerId, { chatAccountId: linked.body.id });
    const g = await flow();
    const refused = await link(scoped, {
      code: g.code,
      wabaId: g.wabaId,
      phoneNumberId: g.phoneNumberId,
      pin: '123456',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('key_scope_insufficient');
    expect((await session(g.code)).exchanged).toBe(false);
  });

  it('the operator turns it off per plan and per customer; the customer setting wins over the plan', async () => {
    const starter = await customer('starter');
    const f = await flow();
    const body = { code: f.code, wabaId: f.wabaId, phoneNumberId: f.phoneNumberId, pin: '123456' };
    // EMBEDDED_SIGNUP_PLANS=basic,pro: not on starter.
    const off = await link(starter.key, body);
    expect(off.status).toBe(403);
    expect(off.body).toMatchObject({ error: 'feature_not_available', plan: 'starter' });
    expect((await session(f.code)).exchanged).toBe(false);
    const on = await call(svc.url, 'PATCH', `/admin/customers/${starter.customerId}`, {
      admin: true,
      body: { embeddedSignup: true },
    });
    expect(on.body.embeddedSignup).toBe(true);
    expect((await link(starter.key, body)).status).toBe(201);
    // Starter has room for one account: a second run is refused before any provider step.
    const second = await flow();
    const full = await link(starter.key, {
      code: second.code,
      wabaId: second.wabaId,
      phoneNumberId: second.phoneNumberId,
      pin: '123456',
    });
    expect(full.status).toBe(409);
    expect(full.body.error).toBe('limit_reached');
    expect((await session(second.code)).exchanged).toBe(false);
    // A number already linked: 409 before any provider step, too.
    const pro0 = await customer('pro');
    const again = await flow({ phoneNumberId: f.phoneNumberId });
    const taken = await link(pro0.key, {
      code: again.code,
      wabaId: again.wabaId,
      phoneNumberId: f.phoneNumberId,
      pin: '123456',
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('already_exists');
    expect((await session(again.code)).exchanged).toBe(false);

    const pro = await customer('pro');
    const patched = await call(svc.url, 'PATCH', `/admin/customers/${pro.customerId}`, {
      admin: true,
      body: { embeddedSignup: false },
    });
    expect(patched.body.embeddedSignup).toBe(false);
    const g = await flow();
    const proBody = { code: g.code, wabaId: g.wabaId, phoneNumberId: g.phoneNumberId, pin: '123456' };
    expect((await link(pro.key, proBody)).body.error).toBe('feature_not_available');
    await call(svc.url, 'PATCH', `/admin/customers/${pro.customerId}`, { admin: true, body: { embeddedSignup: null } });
    expect(
      (await call(svc.url, 'GET', `/admin/customers/${pro.customerId}`, { admin: true })).body.embeddedSignup,
    ).toBe(null);
    expect((await link(pro.key, proBody)).status).toBe(201);
  });
});
