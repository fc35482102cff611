// A customer with OFFICIAL accounts whose WABAs exist in the emulator (management token and a
// catalog seeded), an API key, and optionally a webhook endpoint on a test receiver.
import crypto from 'node:crypto';

import { EVENT_TYPES } from '../../src/shared/vocab.js';
import type { Emulator } from './emulator.js';
import { call, createAccount, createKey } from './harness.js';
import type { Receiver } from './receiver.js';

export const MANAGEMENT_TOKEN = 'EAAG-management-secret-official';

export type OfficialCustomer = {
  customerId: string;
  key: string;
  phoneNumberIds: string[];
  accountIds: string[];
  wabaIds: string[];
  /** Provider template ids by WABA, then template name. */
  templateIds: Record<string, string>[];
};

/** Per account: its own phone-number id and WABA; catalog: promo (MARKETING) and receipt (UTILITY). */
export async function officialCustomer(
  svcUrl: string,
  emu: Emulator,
  opts: { plan?: string; accounts?: number; receiver?: Receiver } = {},
): Promise<OfficialCustomer> {
  const c = await call(svcUrl, 'POST', '/admin/customers', {
    admin: true,
    body: { name: 'Official', plan: opts.plan ?? 'pro', defaultCountry: 'US' },
  });
  const customerId = c.body.id as string;
  const out: OfficialCustomer = {
    customerId,
    key: await createKey(svcUrl, customerId, {}),
    phoneNumberIds: [],
    accountIds: [],
    wabaIds: [],
    templateIds: [],
  };
  for (let i = 0; i < (opts.accounts ?? 1); i++) {
    const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
    const wabaId = `${crypto.randomInt(1e9, 2e9)}${i}`;
    out.phoneNumberIds.push(pn);
    out.wabaIds.push(wabaId);
    out.accountIds.push(
      await createAccount(svcUrl, customerId, {
        official: { phoneNumberId: pn, wabaId, accessToken: 'EAAG-send', managementToken: MANAGEMENT_TOKEN },
      }),
    );
    await emu.number(pn, { wabaId });
    await emu.waba(wabaId, { managementToken: MANAGEMENT_TOKEN });
    const seeded = await emu.seedTemplates(wabaId, [
      { name: 'promo', language: 'en_US', category: 'MARKETING' },
      { name: 'receipt', language: 'en_US', category: 'UTILITY' },
    ]);
    out.templateIds.push(
      Object.fromEntries((seeded.templates as { name: string; id: string }[]).map((t) => [t.name, t.id])),
    );
  }
  if (opts.receiver) {
    const res = await call(svcUrl, 'POST', '/webhook-endpoints', {
      key: out.key,
      body: { url: `${opts.receiver.url}/c/${customerId}`, events: [...EVENT_TYPES] }, // the opt-in types too
    });
    if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return out;
}
