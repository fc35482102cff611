// Outgoing contacts and location in the provider's current form (issue #35 item 2, decision
// 0064), through the real pipeline and the emulator (which checks each kind as the provider does
// and records what it took): contact cards carry `addresses` and `birthday`; a location's
// coordinates go out as decimal strings while our API keeps taking numbers; bounds named by path.
import crypto from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Emulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';

const TO = '+15551239101';

describe('outgoing contacts and location, as the provider takes them today', () => {
  let emu: Emulator;
  let svc: Service;
  let stop: () => Promise<void>;
  let key: string;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Cards', plan: 'pro' },
    });
    await createAccount(svc.url, customer.body.id, {
      official: {
        phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
        wabaId: 'w1',
        accessToken: 'EAAG-cards',
      },
    });
    key = await createKey(svc.url, customer.body.id, {});
  });
  afterAll(() => stop());

  const post = (content: unknown) =>
    call(svc.url, 'POST', '/messages', {
      key,
      body: { externalId: `card-${n++}`, to: { type: 'phone', phoneE164: TO }, content },
    });
  const sentPayload = async (content: unknown) => {
    const res = await post(content);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.messageId as string;
    const m = await eventually(async () => {
      const x = (await call(svc.url, 'GET', `/messages/${id}`, { key })).body;
      return ['delivered', 'failed'].includes(x.status) && x;
    });
    expect(m, JSON.stringify(m.error)).toMatchObject({ status: 'delivered' });
    return emu.state.sent.find((s) => s.messageId === id)!.payload as Record<string, unknown>;
  };

  it('a contact card carries addresses and a birthday', async () => {
    const payload = await sentPayload({
      type: 'contacts',
      contacts: [
        {
          name: { formattedName: 'Grace Hopper', firstName: 'Grace' },
          birthday: '1906-12-09',
          addresses: [
            {
              street: '1 Navy Yard',
              city: 'Arlington',
              state: 'VA',
              zip: '22202',
              country: 'United States',
              countryCode: 'US',
              type: 'WORK',
            },
            { city: 'New York', type: 'HOME' },
          ],
        },
      ],
    });
    expect(payload.contacts).toEqual([
      {
        name: { formatted_name: 'Grace Hopper', first_name: 'Grace' },
        birthday: '1906-12-09',
        addresses: [
          {
            street: '1 Navy Yard',
            city: 'Arlington',
            state: 'VA',
            zip: '22202',
            country: 'United States',
            country_code: 'US',
            type: 'WORK',
          },
          { city: 'New York', type: 'HOME' },
        ],
      },
    ]);
  });

  it('a location goes out with its coordinates as decimal strings, never in exponent form', async () => {
    const payload = await sentPayload({
      type: 'location',
      location: { latitude: 51.5007, longitude: -0.0000001, name: 'Big Ben', address: 'London SW1A 0AA' },
    });
    expect(payload.location).toEqual({
      latitude: '51.5007',
      longitude: '-0.0000001',
      name: 'Big Ben',
      address: 'London SW1A 0AA',
    });
  });

  it('refuses a birthday that is not YYYY-MM-DD and an address field of another name, by path', async () => {
    const card = (extra: Record<string, unknown>) => ({
      type: 'contacts',
      contacts: [{ name: { formattedName: 'X' }, ...extra }],
    });
    const bad = await post(card({ birthday: '09/12/1906' }));
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.details)).toContain('content.contacts.0.birthday');
    const other = await post(card({ addresses: [{ town: 'York' }] }));
    expect(other.status).toBe(400);
    expect(JSON.stringify(other.body.details)).toContain('content.contacts.0.addresses.0');
  });
});
