// Text PostgreSQL cannot store (NUL: 22021 as text, 22P05 as jsonb; unpaired UTF-16 surrogates from
// JSON's "\ud800" escapes: refused as jsonb) in any input, signed or not, gets a 4xx naming where it
// is, or is ignored; never a 5xx (issue #32, decision 0062). The provider webhook answers 200 and
// ignores the items holding it: the provider retries any other answer for days.
import crypto from 'node:crypto';
import net from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createAccount, createKey, type Service, startService } from './support/harness.js';
import { createPortalUser, PortalClient } from './support/portal.js';

const SECRET = 'provider-app-secret-0123456789';
let svc: Service;
let customerId: string;
let accountId: string;
let key: string;
const pn = `pn-unstorable-${crypto.randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  svc = await startService({ role: 'api', env: { PROVIDER_APP_SECRET: SECRET } });
  const c = await call(svc.url, 'POST', '/admin/customers', { admin: true, body: { name: 'U', plan: 'pro' } });
  customerId = c.body.id;
  accountId = await createAccount(svc.url, customerId, {
    official: { phoneNumberId: pn, wabaId: 'w', accessToken: 't' },
  });
  key = await createKey(svc.url, customerId, {});
});
afterAll(async () => svc?.stop());

let n = 0;
/** An inbound text message as the provider's JSON text, `body` spliced in raw (escapes stay escapes). */
const inbound = (from: string, rawBody: string) =>
  `{"from":"${from}","id":"wamid.u${Date.now()}${n++}","timestamp":"${Math.floor(Date.now() / 1000)}",` +
  `"type":"text","text":{"body":"${rawBody}"}}`;
const change = (phoneNumberId: string, messages: string[]) =>
  `{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"${phoneNumberId}"},` +
  `"messages":[${messages.join(',')}]}}`;
const payload = (changes: string[], object = 'whatsapp_business_account') =>
  `{"object":"${object}","entry":[{"id":"w","changes":[${changes.join(',')}]}]}`;
const post = (body: string, signed = true) =>
  fetch(`${svc.url}/provider/webhooks/app`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${crypto
        .createHmac('sha256', signed ? SECRET : 'wrong')
        .update(body)
        .digest('hex')}`,
    },
    body,
  });
const inboundCount = async (phone: string) =>
  (await call(svc.url, 'GET', `/inbound-senders/${phone}`, { key })).body.inboundCount as number;

describe('the signed provider webhook', () => {
  it('answers 200 to a phone_number_id of a long run of NUL characters, and applies the rest of the payload', async () => {
    const nul = '\\u0000'.repeat(5_000);
    const body = payload([change(nul, [inbound('15550001001', 'lost')]), change(pn, [inbound('15550001002', 'kept')])]);
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true });
    expect(await inboundCount('+15550001002')).toBe(1);
    expect(await inboundCount('+15550001001')).toBe(0);
  });

  it('ignores a message holding NUL or an unpaired surrogate, keeping its neighbours', async () => {
    const body = payload([
      change(pn, [
        inbound('15550001003', 'a\\u0000b'),
        inbound('15550001004', 'high \\ud800 alone'),
        inbound('15550001005', 'low \\udc00 alone'),
        inbound('15550001006', 'a pair \\ud83d\\ude00 is fine'),
      ]),
    ]);
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(await inboundCount('+15550001006')).toBe(1);
    for (const phone of ['+15550001003', '+15550001004', '+15550001005']) expect(await inboundCount(phone)).toBe(0);
  });

  it('answers 200 and applies nothing when such text is outside every item; unsigned, 401 as ever', async () => {
    const body = payload([change(pn, [inbound('15550001007', 'x')])], 'whatsapp\\u0000');
    expect((await post(body)).status).toBe(200);
    expect(await inboundCount('+15550001007')).toBe(0);
    const unsigned = await post(payload([change('\\u0000', [])]), false);
    expect(unsigned.status).toBe(401);
    expect(await unsigned.json()).toEqual({ error: 'invalid_signature' });
  });
});

describe('the API', () => {
  it('answers 400 validation_error naming the field, parameter or path for NUL and unpaired surrogates', async () => {
    for (const raw of ['\\u0000', '\\ud800', '\\udfff']) {
      const res = await call(svc.url, 'POST', '/messages', {
        key,
        body: `{"externalId":"x${raw}","to":{"type":"phone","phoneE164":"+15551230000"},"content":{"type":"text","text":"hi"},"chatAccountId":"${accountId}"}`,
      });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: {
          error: 'validation_error',
          details: [{ path: 'externalId', message: 'must not contain NUL characters or unpaired surrogates' }],
        },
      });
    }
    const query = await call(svc.url, 'GET', '/messages?externalId=a%00b', { key });
    expect([query.status, query.body.details?.[0]?.path]).toEqual([400, 'externalId']);
    const path = await call(svc.url, 'GET', '/inbound-senders/%00', { key });
    expect([path.status, path.body.details?.[0]?.path]).toEqual([400, 'phone']);
  });

  it('has NUL in a header refused by the HTTP parser (400) before anything reads it', async () => {
    const { port } = new URL(svc.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(`GET /messages HTTP/1.1\r\nHost: x\r\nx-api-key: ak_live_\u0000x\r\n\r\n`, 'latin1');
    await closed;
    expect(got).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('the portal', () => {
  let owner: PortalClient;
  beforeAll(async () => {
    const user = await createPortalUser(svc.url, customerId, 'owner@example.com');
    owner = new PortalClient(svc.url);
    expect((await owner.login(user.email)).status).toBe(303);
  });

  it('answers a query parameter holding NUL with a 400 page, not a 500', async () => {
    for (const path of ['/portal/messages?externalId=%00', '/portal/messages?q=a%00', '/portal/inbox?q=%00']) {
      const page = await owner.get(path);
      expect(page.status, path).toBe(400);
      expect(page.text, path).toContain('must not contain NUL characters or unpaired surrogates');
    }
    expect((await owner.get('/portal/messages?q=fine')).status).toBe(200);
  });

  it("answers a form field holding NUL, and NUL inside the broadcast form's JSON, with a 400 page", async () => {
    expect((await owner.submit('/portal/keys', '/portal/keys', { name: 'a\u0000b', password: 'x' })).status).toBe(400);
    const refused = await owner.submit('/portal/broadcasts/new', '/portal/broadcasts', {
      request: JSON.stringify({
        externalId: 'portal-nul',
        chatAccountId: accountId,
        content: { type: 'text', text: 'hi\u0000' },
        recipients: [{ phoneE164: '+15551230009' }],
      }),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('must not contain NUL characters or unpaired surrogates');
  });

  it('answers a multipart field or a CSV holding NUL with a 400 page', async () => {
    const compose = await owner.get('/portal/broadcasts/new');
    const upload = async (text: string, csv: string) => {
      const form = new FormData();
      form.append('_csrf', owner.formToken(compose.text));
      form.append('chatAccountId', accountId);
      form.append('contentType', 'text');
      form.append('text', text);
      form.append('csv', new Blob([csv], { type: 'text/csv' }), 'r.csv');
      const res = await fetch(`${svc.url}/portal/broadcasts/preview`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        body: form,
      });
      return { status: res.status, text: await res.text() };
    };
    expect((await upload('hi', '+15551230001\n')).status).toBe(200);
    const field = await upload('hi\u0000', '+15551230001\n');
    expect(field.status).toBe(400);
    expect(field.text).toContain('must not contain NUL characters or unpaired surrogates');
    const csv = await upload('hi', '+15551230001,ext\u0000\n');
    expect(csv.status).toBe(400);
    expect(csv.text).toContain('must not contain NUL characters');
  });
});
