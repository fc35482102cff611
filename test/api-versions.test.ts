// The Graph API version as a setting (issue #25.5): the operator API shows it, the emulator refuses
// expired and unknown versions as the provider does, and a service calling a version the provider
// refuses fails its sends with a clear code instead of retrying them.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { UNSUPPORTED_VERSION_CODE } from '../src/emulator/emulator-versions.js';
import { API_VERSIONS, apiVersionStatus } from '../src/provider/api-versions.js';
import { type Emulator, providerEnv, startEmulator } from './support/emulator.js';
import {
  call,
  createAccount,
  createKey,
  eventually,
  type Service,
  startService,
  textMessage,
} from './support/harness.js';

/**
 * The newest version with a published expiry that the provider still serves today: the service may
 * be configured with it, and an emulator whose clock stands on its expiry date refuses it.
 */
const [VERSION, DATES] = Object.entries(API_VERSIONS).find(
  ([v, d]) => d.expires !== null && apiVersionStatus(v).state !== 'expired',
)!;
const EXPIRY = new Date(`${DATES.expires}T00:00:00Z`);

async function graphPost(url: string, path: string) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer EAAG-any' },
    body: JSON.stringify({ messaging_product: 'whatsapp', to: '15551230000', type: 'text', text: { body: 'hi' } }),
  });
  return { status: res.status, body: (await res.json()) as { error?: Record<string, unknown> } };
}

describe('Graph API versions at the emulator', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(() => emu.stop());

  it('refuses an expired version and an unknown one with the Graph error envelope, and serves current ones', async () => {
    const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
    await emu.number(pn, {});
    // v18.0 expired on 2026-01-26.
    const expired = await graphPost(emu.url, `/v18.0/${pn}/messages`);
    expect(expired).toMatchObject({
      status: 400,
      body: {
        error: {
          code: UNSUPPORTED_VERSION_CODE,
          type: 'OAuthException',
          message: expect.stringContaining('v18.0 expired on 2026-01-26'),
          fbtrace_id: expect.any(String),
        },
      },
    });
    expect(await graphPost(emu.url, `/v99.0/${pn}/messages`)).toMatchObject({
      status: 400,
      body: {
        error: { code: UNSUPPORTED_VERSION_CODE, message: expect.stringContaining('Unknown Graph API version') },
      },
    });
    const served = await graphPost(emu.url, `/${VERSION}/${pn}/messages`);
    expect(served.status).toBe(200);
    // Nothing was accepted for the refused versions: only the served one reached the send.
    expect(emu.sent().filter((s) => s.phoneNumberId === pn)).toHaveLength(1);
  });
});

describe('a service calling a version the provider refuses', () => {
  let emu: Emulator;
  let svc: Service;
  beforeAll(async () => {
    // The provider's clock stands on the expiry date of the version the service was started with.
    emu = await startEmulator({ now: () => EXPIRY });
    svc = await startService({
      env: { ...providerEnv(emu), WORKER_POLL_MS: '50', PROVIDER_API_VERSION: VERSION },
    });
  });
  afterAll(async () => {
    await svc.stop();
    await emu.stop();
  });

  it('shows the version in the operator API', async () => {
    const res = await call(svc.url, 'GET', '/admin/provider', { admin: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      apiVersion: VERSION,
      state: expect.stringMatching(/^(current|expiring)$/),
      released: DATES.released,
      expires: DATES.expires,
      daysLeft: expect.any(Number),
    });
    expect(res.body.versions).toContainEqual({
      version: 'v18.0',
      state: 'expired',
      released: '2023-09-12',
      expires: '2026-01-26',
      daysLeft: expect.any(Number),
    });
    expect(res.body.versions.map((v: { version: string }) => v.version)).toEqual(Object.keys(API_VERSIONS));
    expect((await call(svc.url, 'GET', '/admin/provider')).status).toBe(401);
  });

  it('fails the send at once with API_VERSION_UNSUPPORTED, naming the setting', async () => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Versions', plan: 'pro' },
    });
    const phoneNumberId = `pn${crypto.randomBytes(5).toString('hex')}`;
    await createAccount(svc.url, customer.body.id, {
      official: { phoneNumberId, wabaId: 'w1', accessToken: 'EAAG-live-token' },
    });
    await emu.number(phoneNumberId, {});
    const key = await createKey(svc.url, customer.body.id, {});
    const sent = await call(svc.url, 'POST', '/messages', { key, body: textMessage('version-1') });
    expect(sent.status).toBe(201);
    const message = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${sent.body.messageId}`, { key })).body;
      return m.status === 'failed' ? m : undefined;
    });
    expect(message.error).toMatchObject({
      code: 'API_VERSION_UNSUPPORTED',
      message: expect.stringContaining('PROVIDER_API_VERSION'),
      provider: { code: UNSUPPORTED_VERSION_CODE },
    });
    expect(emu.sent().filter((s) => s.phoneNumberId === phoneNumberId)).toHaveLength(0);
  });
});
