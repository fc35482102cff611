// Fuzzing with text PostgreSQL cannot store (issue #32, decision 0062): NUL (long runs of it
// included) and unpaired UTF-16 surrogates, put at a random place of otherwise ordinary input, as
// a value or in a key. The signed provider webhook must answer 200 (the provider retries anything
// else for days) and keep applying the rest; the API must answer 400 validation_error naming the
// place; query and path parameters, portal pages and forms a 4xx; nothing a 5xx. A fuzz run found
// a signed webhook with a phone_number_id of NULs answered 500: these properties put such text
// everywhere on purpose instead of waiting for a seed to find it.
//
// A fixed number of cases from one seed, FUZZ_SEED (default fixed; printed); FUZZ_RUNS_SCALE
// multiplies every count.
import crypto from 'node:crypto';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN_TOKEN, call, createAccount, createKey, type Service, startService } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_261_129;
const SCALE = Number(process.env.FUZZ_RUNS_SCALE ?? '1');
console.log(`fuzz-unstorable: seed ${SEED} (replay with FUZZ_SEED=${SEED}), runs × ${SCALE}`);
const params = (numRuns: number): fc.Parameters<unknown> => ({
  numRuns: Math.max(1, Math.round(numRuns * SCALE)),
  seed: SEED,
});

const SECRET = 'provider-app-secret-0123456789';
let svc: Service;
let customerId: string;
let accountId: string;
let key: string;
const pn = `pn-fuzz-${crypto.randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  svc = await startService({ role: 'api', env: { PROVIDER_APP_SECRET: SECRET } });
  const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'F', plan: 'pro' } });
  customerId = c.body.id;
  accountId = await createAccount(svc.url, customerId, {
    official: { phoneNumberId: pn, wabaId: 'waba-fuzz', accessToken: 't' },
  });
  key = await createKey(svc.url, customerId, {});
});
afterAll(async () => svc?.stop());

// ---------------------------------------------------------------------------------------------
// Generators

/** Text the database refuses: NUL (alone, in text, a long run), an unpaired high or low surrogate. */
const unstorable = fc.oneof(
  fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a\u0000b', 'x\ud800y', '\udc00\ud800'),
  fc.integer({ min: 2, max: 20_000 }).map((n) => '\u0000'.repeat(n)),
  fc
    .tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\u0000', '\ud83d', '\ude00'), fc.string({ maxLength: 10 }))
    .map(([a, bad, b]) => `${a}${bad}${b}`),
);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Spot = { path: string[]; kind: 'value' | 'key' };

/** Every place of a value: each string, number, boolean or null as a value, each object key as a key. */
function spotsOf(v: Json, path: string[] = []): Spot[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => spotsOf(x, [...path, String(i)]));
  if (v !== null && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) => [
      { path: [...path, k], kind: 'key' as const },
      ...spotsOf(x, [...path, k]),
    ]);
  return [{ path, kind: 'value' }];
}

/** `v` with `bad` put at the spot: as the value there, or into the key's name. */
function putAt(v: Json, spot: Spot, bad: string): Json {
  const copy = structuredClone(v);
  const parentPath = spot.path.slice(0, -1);
  let parent: any = copy;
  for (const p of parentPath) parent = parent[p];
  const last = spot.path.at(-1)!;
  if (spot.kind === 'value') parent[last] = bad;
  else {
    const entries = Object.entries(parent as Record<string, Json>).map(([k, x]) => [k === last ? `${k}${bad}` : k, x]);
    for (const k of Object.keys(parent)) delete parent[k];
    Object.assign(parent, Object.fromEntries(entries));
  }
  return copy;
}

/** An ordinary value, with the unstorable text put at one of its places. */
const withUnstorable = (base: fc.Arbitrary<Json>) =>
  base.chain((v) => {
    const spots = spotsOf(v);
    return fc.tuple(fc.constant(v), fc.constantFrom(...spots), unstorable).map(([value, spot, bad]) => ({
      value: putAt(value, spot, bad),
      spot,
    }));
  });

const now = () => String(Math.floor(Date.now() / 1000));
const wamid = fc.stringMatching(/^wamid\.[A-Za-z0-9]{8,20}$/);
const phone = fc.stringMatching(/^1555[0-9]{7}$/);
const statusItem = fc.record({
  id: wamid,
  status: fc.constantFrom('sent', 'delivered', 'read', 'failed'),
  timestamp: fc.constant(now()),
  recipient_id: phone,
  errors: fc.constant([{ code: 131050, title: 'opted out', error_data: { details: 'x' } }]),
  pricing: fc.constant({ billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' }),
});
const messageItem = fc.record({
  from: phone,
  id: wamid,
  timestamp: fc.constant(now()),
  type: fc.constant('text'),
  text: fc.record({ body: fc.string({ minLength: 1, maxLength: 40 }) }),
});
const contact = fc.record({ profile: fc.record({ name: fc.string({ maxLength: 20 }) }), wa_id: phone });
const messagesChange = fc.record({
  field: fc.constant('messages'),
  value: fc.record({
    messaging_product: fc.constant('whatsapp'),
    metadata: fc.record({ display_phone_number: fc.constant('15550100200'), phone_number_id: fc.constant(pn) }),
    contacts: fc.array(contact, { maxLength: 2 }),
    statuses: fc.array(statusItem, { maxLength: 3 }),
    messages: fc.array(messageItem, { maxLength: 3 }),
  }),
});
const templateChange = fc.record({
  field: fc.constant('message_template_status_update'),
  value: fc.record({
    event: fc.constantFrom('APPROVED', 'PAUSED', 'REJECTED'),
    message_template_id: fc.integer({ min: 1 }),
    message_template_name: fc.stringMatching(/^[a-z_]{1,20}$/),
    message_template_language: fc.constant('en'),
    reason: fc.string({ maxLength: 20 }),
  }),
});
const preferencesChange = fc.record({
  field: fc.constant('user_preferences'),
  value: fc.record({
    messaging_product: fc.constant('whatsapp'),
    metadata: fc.record({ phone_number_id: fc.constant(pn) }),
    user_preferences: fc.array(
      fc.record({
        wa_id: phone,
        detail: fc.string({ maxLength: 20 }),
        category: fc.constant('marketing_messages'),
        value: fc.constantFrom('stop', 'resume'),
        timestamp: fc.constant(Number(now())),
      }),
      { maxLength: 2 },
    ),
  }),
});
const limitChange = fc.record({
  field: fc.constant('business_capability_update'),
  value: fc.record({ max_daily_conversation_per_phone: fc.constantFrom(250, 1000, 10000) }),
});
const webhookPayload = fc.record({
  object: fc.constant('whatsapp_business_account'),
  entry: fc.array(
    fc.record({
      id: fc.constantFrom('waba-fuzz', 'w'),
      changes: fc.array(fc.oneof(messagesChange, templateChange, preferencesChange, limitChange), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
    { minLength: 1, maxLength: 2 },
  ),
}) as unknown as fc.Arbitrary<Json>;

const sign = (body: string) => `sha256=${crypto.createHmac('sha256', SECRET).update(body).digest('hex')}`;
const postWebhook = async (body: string, signature = sign(body)) => {
  const res = await fetch(`${svc.url}/provider/webhooks/app`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
    body,
  });
  return { status: res.status, text: await res.text() };
};

/** An object body of ordinary JSON (no prototype keys: the JSON parser refuses those first). */
// (printable ASCII elsewhere: the one place with such text is the one the answer must name)
const objectBody = fc.dictionary(
  fc
    .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 10 })
    .filter((k) => k !== '__proto__' && k !== 'constructor'),
  fc
    .jsonValue({ maxDepth: 3, stringUnit: 'grapheme-ascii' })
    .filter((v) => !/"(__proto__|constructor)"/.test(JSON.stringify(v))),
  { minKeys: 1, maxKeys: 5 },
) as unknown as fc.Arbitrary<Json>;

// ---------------------------------------------------------------------------------------------

describe('text the database cannot store, anywhere', () => {
  it('the signed provider webhook: 200 {received:true} wherever it is, never a 5xx; unsigned, 401', async () => {
    await fc.assert(
      fc.asyncProperty(withUnstorable(webhookPayload), fc.boolean(), async ({ value, spot }, signed) => {
        const body = JSON.stringify(value);
        const r = await postWebhook(body, signed ? sign(body) : 'sha256=00');
        const what = `${signed ? 'signed' : 'unsigned'} at ${spot.kind} ${spot.path.join('.')}`;
        expect(r.status, `${what} -> ${r.status} ${r.text.slice(0, 200)}`).toBe(signed ? 200 : 401);
        expect(JSON.parse(r.text), what).toEqual(signed ? { received: true } : { error: 'invalid_signature' });
      }),
      params(150),
    );
    // Still applying what it can store: an ordinary inbound message is recorded.
    const from = '15550009999';
    const clean = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'w',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: pn },
                messages: [
                  { from, id: `wamid.clean${Date.now()}`, timestamp: now(), type: 'text', text: { body: 'hi' } },
                ],
              },
            },
          ],
        },
      ],
    });
    expect((await postWebhook(clean)).status).toBe(200);
    expect((await call(svc.url, 'GET', `/inbound-senders/+${from}`, { key })).body.inboundCount).toBe(1);
  });

  it('API bodies: 400 validation_error naming the place (a key: its object), whatever the route', async () => {
    const routes: [string, string, boolean][] = [
      ['POST', '/messages', false],
      ['POST', '/messages/broadcast', false],
      ['POST', '/webhook-endpoints', false],
      ['POST', '/forwarding-rules', false],
      ['POST', '/inbound-senders/lookup', false],
      ['PUT', `/chat-accounts/${accountId}/opt-out-keywords`, false],
      ['PUT', `/chat-accounts/${accountId}/inbox-filter`, false],
      ['POST', `/chat-accounts/${accountId}/templates`, false],
      ['POST', '/admin/customers', true],
      ['PATCH', `/admin/customers/${customerId}`, true],
      ['POST', `/admin/customers/${customerId}/chat-accounts`, true],
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        withUnstorable(objectBody),
        async ([method, path, admin], { value, spot }) => {
          const r = await call(svc.url, method, path, {
            ...(admin ? { admin: true } : { key }),
            body: JSON.stringify(value),
          });
          const where = (spot.kind === 'key' ? spot.path.slice(0, -1) : spot.path).join('.');
          const what = `${method} ${path} with it at ${spot.kind} ${spot.path.join('.')} -> ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
          expect(r.status, what).toBe(400);
          expect(r.body.error, what).toBe('validation_error');
          expect(r.body.details, what).toEqual([{ path: where, message: expect.stringMatching(/NUL characters/) }]);
        },
      ),
      params(150),
    );
  });

  it('query and path parameters: never a 5xx (a 4xx, or ignored where the route does not read it)', async () => {
    const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\u0000'));
    const targets = fc.oneof(
      fc
        .tuple(
          fc.constantFrom(
            '/messages?externalId=',
            '/messages?providerMessageId=',
            '/inbound-messages?from=',
            '/forwarding-rules?cursor=x&limit=',
            '/webhook-endpoints?limit=',
            `/chat-accounts/${accountId}/suppressions?phone=`,
            '/usage?month=',
            `/chat-accounts/${accountId}/templates?name=`,
          ),
          unstorable,
        )
        .map(([p, bad]) => ({ path: `${p}${enc(bad.slice(0, 2000))}`, admin: false })),
      fc
        .tuple(
          fc.constantFrom(
            '/messages/',
            '/inbound-messages/',
            '/inbound-senders/',
            '/webhook-endpoints/',
            '/forwarding-rules/',
            '/broadcasts/',
            '/chat-accounts/',
          ),
          unstorable,
        )
        .map(([p, bad]) => ({ path: `${p}${enc(bad.slice(0, 400))}`, admin: false })),
      fc
        .tuple(fc.constantFrom('/admin/customers/', '/admin/customers?name=', '/admin/api-keys/'), unstorable)
        .map(([p, bad]) => ({ path: `${p}${enc(bad.slice(0, 400))}`, admin: true })),
    );
    await fc.assert(
      fc.asyncProperty(targets, async ({ path, admin }) => {
        const res = await fetch(`${svc.url}${path}`, {
          headers: admin ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { 'x-api-key': key },
        });
        const text = await res.text();
        const what = `GET ${path.slice(0, 200)} -> ${res.status} ${text.slice(0, 200)}`;
        // (a parameter the route does not read is ignored: 200)
        expect(res.status, what).toBeLessThan(500);
        if (res.status >= 300) expect(JSON.parse(text).error, what).toBeTypeOf('string');
      }),
      params(150),
    );
  });

  describe('the portal', () => {
    let owner: PortalClient;
    let token: string;
    beforeAll(async () => {
      const user = await createPortalUser(svc.url, customerId, 'fuzz-owner@example.com');
      owner = new PortalClient(svc.url);
      expect((await owner.login(user.email)).status).toBe(303);
      token = owner.formToken((await owner.get('/portal/keys')).text);
    });

    it('pages and forms with it in a query parameter or a field: never a 5xx; a form field, 400', async () => {
      const pages = [
        '/portal/messages',
        '/portal/messages.csv',
        '/portal/inbox',
        '/portal/inbox/sender',
        '/portal/audit',
        '/portal/broadcasts',
        '/portal/templates',
        '/portal/webhooks',
        '/portal/keys',
        '/portal/suppressions',
        '/portal/suppressions/remove',
      ];
      const forms = [
        '/portal/keys',
        '/portal/inbox/rules',
        '/portal/inbox/rules/check',
        '/portal/webhooks',
        '/portal/broadcasts',
        '/portal/broadcasts/preview',
        '/portal/profile',
        '/portal/team',
        '/portal/suppressions',
      ];
      const queryKey = fc.constantFrom('q', 'externalId', 'phone', 'status', 'accountId', 'since', 'cursor', 'x');
      const fieldKey = fc.constantFrom('name', 'url', 'pattern', 'text', 'request', 'email', 'recipients', 'x');
      const cases = fc.oneof(
        fc.tuple(fc.constantFrom(...pages), queryKey, unstorable).map(([page, k, bad]) => ({
          method: 'GET',
          path: `${page}?${k}=${encodeURIComponent(bad.replace(/[\ud800-\udfff]/g, '\u0000').slice(0, 2000))}`,
          body: undefined as Record<string, string> | undefined,
        })),
        fc.tuple(fc.constantFrom(...forms), fieldKey, unstorable).map(([form, k, bad]) => ({
          method: 'POST',
          path: form,
          // (a form is UTF-8: an unpaired surrogate cannot travel in one; NUL can)
          body: { _csrf: token, [k]: bad.replace(/[\ud800-\udfff]/g, '\u0000').slice(0, 2000) },
        })),
      );
      await fc.assert(
        fc.asyncProperty(cases, async ({ method, path, body }) => {
          const page = await owner.request(method, path, body);
          const what = `${method} ${path.slice(0, 200)} ${JSON.stringify(body ?? {}).slice(0, 100)} -> ${page.status}`;
          expect(page.status, what).toBeLessThan(500);
          // A form field is always read (400); a query parameter a page does not use may be ignored.
          if (method === 'POST') expect(page.status, what).toBeGreaterThanOrEqual(400);
        }),
        params(100),
      );
    });
  });
});
