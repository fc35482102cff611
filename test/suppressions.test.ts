// Suppression lists and the reply window (decision 0014), through the real service, the emulator
// over HTTP and signed provider webhooks: every way onto and off a list (131050 at send time and
// in a failed receipt, user_preferences stop/resume, opt-out keywords, the customer's POST/DELETE),
// which sends a listed number still gets, quota given back, the window at exactly 24 h, 131047
// and requireReplyWindow, and isolation between customers and accounts.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { quotaMonth } from '../src/plans/plans.js';
import { type Emulator, resetEmulator, startLiveService } from './support/emulator.js';
import { call, createAccount, createKey, eventually, type Service } from './support/harness.js';
import { JPEG_BYTES, upload } from './support/media-files.js';

const MGMT = 'EAAG-management-secret-suppress';

describe('suppression lists and the reply window', () => {
  let svc: Service;
  let emu: Emulator;
  let stop: () => Promise<void>;
  let n = 0;

  beforeAll(async () => {
    ({ emu, svc, stop } = await startLiveService());
  });
  afterAll(() => stop());
  // Receipts stop at sent: a message that went out stays `sent`.
  beforeEach(() => resetEmulator(emu, { statuses: ['sent'] }));

  /** A customer with `accounts` official accounts, each with its catalog: promo (MARKETING), receipt (UTILITY). */
  const customer = async (plan = 'pro', accounts = 1) => {
    const c = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Suppress', plan, defaultCountry: 'US' },
    });
    const customerId = c.body.id as string;
    const phoneNumberIds: string[] = [];
    const accountIds: string[] = [];
    for (let i = 0; i < accounts; i++) {
      const pn = `pn${crypto.randomBytes(5).toString('hex')}`;
      const wabaId = `waba${crypto.randomBytes(5).toString('hex')}`;
      phoneNumberIds.push(pn);
      accountIds.push(
        await createAccount(svc.url, customerId, {
          official: { phoneNumberId: pn, wabaId, accessToken: 'EAAG-send', managementToken: MGMT },
        }),
      );
      await emu.waba(wabaId, { managementToken: MGMT });
      await emu.seedTemplates(wabaId, [
        { name: 'promo', language: 'en_US', category: 'MARKETING' },
        { name: 'receipt', language: 'en_US', category: 'UTILITY' },
      ]);
    }
    return {
      customerId,
      phoneNumberIds,
      accountIds,
      key: await createKey(svc.url, customerId, {}),
      scoped: await createKey(svc.url, customerId, { chatAccountId: accountIds[0] }),
    };
  };
  type Customer = Awaited<ReturnType<typeof customer>>;

  const list = (key: string, accountId: string, qs = '') =>
    call(svc.url, 'GET', `/chat-accounts/${accountId}/suppressions${qs}`, { key });
  const listed = async (t: Customer, i = 0) =>
    (await list(t.key, t.accountIds[i]!, '?limit=100')).body.suppressions as {
      phone: string;
      source: string;
      reason: string;
      since: string;
    }[];
  const add = (key: string, accountId: string, phone: string, reason?: string) =>
    call(svc.url, 'POST', `/chat-accounts/${accountId}/suppressions`, { key, body: { phone, reason } });
  const remove = (key: string, accountId: string, phone: string) =>
    call(svc.url, 'DELETE', `/chat-accounts/${accountId}/suppressions/${encodeURIComponent(phone)}`, { key });
  const sender = async (t: Customer, phone: string, i = 0) =>
    (
      await call(svc.url, 'GET', `/inbound-senders/${encodeURIComponent(phone)}?chatAccountId=${t.accountIds[i]}`, {
        key: t.key,
      })
    ).body;
  const emulator = async (path: string, body: unknown) => {
    const res = await fetch(`${emu.url}/__emulator${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await res.json()) as { delivered: boolean };
  };
  /** An inbound text through the emulator (its signed webhook), optionally at a given provider time. */
  const inbound = async (t: Customer, from: string, text: string, timestamp?: number, i = 0) =>
    expect((await emulator('/inbound', { phoneNumberId: t.phoneNumberIds[i], from, text, timestamp })).delivered).toBe(
      true,
    );
  const preference = async (t: Customer, from: string, value: 'stop' | 'resume', i = 0) =>
    expect((await emulator('/user-preferences', { phoneNumberId: t.phoneNumberIds[i], from, value })).delivered).toBe(
      true,
    );
  const number = () => `+1555${String(2_000_000 + n++).padStart(7, '0')}`;
  const template = (name: string) => ({ type: 'template', template: { name, language: 'en_US' } });
  const send = async (t: Customer, to: string, content: unknown, extra: Record<string, unknown> = {}) => {
    const res = await call(svc.url, 'POST', '/messages', {
      key: t.key,
      body: { externalId: `x-${n++}`, to: { type: 'phone', phoneE164: to }, content, ...extra },
    });
    expect(res.status).toBe(201);
    return res.body.messageId as string;
  };
  /** The message once it left the queue (sent or further, or failed). */
  const settled = (t: Customer, id: string) =>
    eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
      return m.status !== 'pending' && m.status !== 'queued' && m;
    });
  const reachedProvider = (id: string) => emu.sent().some((s) => s.messageId === id);
  const used = async (customerId: string) =>
    Number(
      (
        await svc.db.query<{ used: number }>(
          'SELECT used FROM quota_usage WHERE customer_id = $1 AND month = $2::date',
          [customerId, quotaMonth(new Date()).month],
        )
      )[0]?.used ?? 0,
    );
  const text = { type: 'text', text: 'hello' };

  it('customer POST and DELETE: normalized numbers, 201 then 200, listed with source customer, 404 once gone', async () => {
    const t = await customer();
    const created = await add(t.key, t.accountIds[0]!, '(650) 555-0001', 'Asked by phone');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ phone: '+16505550001', source: 'customer', reason: 'Asked by phone' });
    const again = await add(t.key, t.accountIds[0]!, '+1 650 555 0001', 'other');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(created.body);
    expect(await listed(t)).toEqual([created.body]);
    expect(await sender(t, '6505550001')).toMatchObject({ optedOut: true, optedOutAt: created.body.since });
    expect(await add(t.key, t.accountIds[0]!, 'not-a-number')).toMatchObject({
      status: 400,
      body: { error: 'validation_error', details: [{ path: 'phone' }] },
    });
    expect((await remove(t.key, t.accountIds[0]!, '+16505550001')).status).toBe(204);
    expect(await listed(t)).toEqual([]);
    expect(await sender(t, '+16505550001')).toMatchObject({ optedOut: false, optedOutAt: null });
    expect(await remove(t.key, t.accountIds[0]!, '6505550001')).toMatchObject({
      status: 404,
      body: { error: 'suppression_not_found' },
    });
  });

  it('pages with the cursor, newest first', async () => {
    const t = await customer();
    for (let i = 0; i < 5; i++) await add(t.key, t.accountIds[0]!, `+1555300010${i}`);
    const first = await list(t.key, t.accountIds[0]!, '?limit=2');
    expect(first.body.suppressions.map((s: { phone: string }) => s.phone)).toEqual(['+15553000104', '+15553000103']);
    const second = await list(t.key, t.accountIds[0]!, `?limit=10&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ nextCursor: null });
    expect(second.body.suppressions).toHaveLength(3);
    expect((await list(t.key, t.accountIds[0]!, '?cursor=bad!')).body.error).toBe('invalid_cursor');
  });

  it('isolation: another customer gets 404, a scoped key only its account, lists and senders are per account', async () => {
    const a = await customer('pro', 2);
    const b = await customer();
    await add(a.key, a.accountIds[0]!, '+15553000201');
    for (const res of [
      await list(b.key, a.accountIds[0]!),
      await add(b.key, a.accountIds[0]!, '+15553000202'),
      await remove(b.key, a.accountIds[0]!, '+15553000201'),
      await call(svc.url, 'GET', `/chat-accounts/${a.accountIds[0]}/opt-out-keywords`, { key: b.key }),
    ])
      expect(res).toMatchObject({ status: 404, body: { error: 'account_not_found' } });
    expect(await list(a.scoped, a.accountIds[1]!)).toMatchObject({
      status: 403,
      body: { error: 'key_scope_violation' },
    });
    expect((await list(a.scoped, a.accountIds[0]!)).body.suppressions).toHaveLength(1);
    expect(await listed(a, 1)).toEqual([]);
    expect(await sender(a, '+15553000201', 1)).toMatchObject({ optedOut: false });
    expect(await listed(b)).toEqual([]);
    // A keyword written to one account suppresses the number there only.
    await inbound(a, '15553000203', 'STOP', undefined, 1);
    expect((await listed(a, 1)).map((s) => s.phone)).toEqual(['+15553000203']);
    expect((await listed(a, 0)).map((s) => s.phone)).toEqual(['+15553000201']);
  });

  it('opt-out keywords: whole text, any casing, surrounding spaces; never inside longer text; per-account list', async () => {
    const t = await customer();
    const writes: [string, string, boolean][] = [
      ['15553000301', 'stop', true],
      ['15553000302', '  Unsubscribe \n', true],
      ['15553000303', 'BaJa', true],
      ['15553000304', 'Arret', true],
      ['15553000305', 'please stop', false],
      ['15553000306', 'STOP now', false],
      ['15553000307', 'stopp ', true],
      ['15553000308', 'nonstop', false],
    ];
    for (const [from, body] of writes) await inbound(t, from, body);
    const phones = (await listed(t)).map((s) => s.phone).sort();
    expect(phones).toEqual(writes.filter(([, , hit]) => hit).map(([from]) => `+${from}`));
    expect((await listed(t)).every((s) => s.source === 'keyword')).toBe(true);

    const set = await call(svc.url, 'PUT', `/chat-accounts/${t.accountIds[0]}/opt-out-keywords`, {
      key: t.key,
      body: { keywords: [' cancel ', 'Halt'] },
    });
    expect(set.body).toEqual({ chatAccountId: t.accountIds[0], keywords: ['CANCEL', 'HALT'] });
    expect(
      (await call(svc.url, 'GET', `/chat-accounts/${t.accountIds[0]}/opt-out-keywords`, { key: t.key })).body,
    ).toEqual(set.body);
    await inbound(t, '15553000309', 'STOP');
    await inbound(t, '15553000310', 'CaNcEl');
    const now = (await listed(t)).map((s) => s.phone);
    expect(now).toContain('+15553000310');
    expect(now).not.toContain('+15553000309');
  });

  it("user_preferences: stop lists the number, resume takes it off (but not the customer's own entry)", async () => {
    const t = await customer();
    await preference(t, '15553000401', 'stop');
    expect(await listed(t)).toMatchObject([{ phone: '+15553000401', source: 'user_preferences' }]);
    await preference(t, '15553000401', 'resume');
    expect(await listed(t)).toEqual([]);
    await add(t.key, t.accountIds[0]!, '+15553000402');
    await preference(t, '15553000402', 'resume');
    expect(await listed(t)).toMatchObject([{ phone: '+15553000402', source: 'customer' }]);
  });

  it('provider error 131050, at send time or in a failed receipt, fails the message and lists the number', async () => {
    const t = await customer();
    await emu.rule({ to: '15553000501', httpStatus: 400, error: { code: 131050, message: 'User opted out' } });
    const syncId = await send(t, '+15553000501', template('receipt'));
    expect(await settled(t, syncId)).toMatchObject({ status: 'failed', error: { code: 'RECIPIENT_OPTED_OUT' } });
    await emu.rule({ to: '15553000502', asyncFailure: { code: 131050, title: 'User opted out' } });
    const asyncId = await send(t, '+15553000502', template('receipt'));
    const failed = await eventually(async () => {
      const m = (await call(svc.url, 'GET', `/messages/${asyncId}`, { key: t.key })).body;
      return m.status === 'failed' && m;
    });
    expect(failed.error).toMatchObject({ code: 'RECIPIENT_OPTED_OUT', provider: { code: 131050 } });
    await eventually(async () => (await listed(t)).length === 2);
    expect((await listed(t)).map((s) => [s.phone, s.source]).sort()).toEqual([
      ['+15553000501', 'provider_error'],
      ['+15553000502', 'provider_error'],
    ]);
  });

  it('a listed number gets no MARKETING template (no call, quota back) but utility templates, text and media', async () => {
    const t = await customer();
    const listedNumber = '+15553000601';
    await add(t.key, t.accountIds[0]!, listedNumber);
    const before = await used(t.customerId);
    const marketing = await send(t, listedNumber, template('promo'));
    const m = await settled(t, marketing);
    expect(m).toMatchObject({ status: 'failed', attemptCount: 0, error: { code: 'RECIPIENT_OPTED_OUT' } });
    expect(reachedProvider(marketing)).toBe(false);
    expect(await used(t.customerId)).toBe(before);
    const media = (await upload(svc.url, t.key, JPEG_BYTES, 'a.jpg', 'image/jpeg')).body.mediaId as string;
    for (const content of [template('receipt'), text, { type: 'image', image: { mediaId: media } }]) {
      const id = await send(t, listedNumber, content);
      expect(await settled(t, id)).toMatchObject({ status: 'sent' });
      expect(reachedProvider(id)).toBe(true);
    }
    expect(await used(t.customerId)).toBe(before + 3);
    // Another account of another customer, same number: not listed there, so the promo goes.
    const other = await customer();
    expect(await settled(other, await send(other, listedNumber, template('promo')))).toMatchObject({ status: 'sent' });
  });

  it('a broadcast skips listed numbers: RECIPIENT_OPTED_OUT, no call, their quota given back', async () => {
    const t = await customer('basic');
    await add(t.key, t.accountIds[0]!, '+15553000701');
    await preference(t, '15553000702', 'stop');
    const res = await call(svc.url, 'POST', '/messages/broadcast', {
      key: t.key,
      body: {
        externalId: 'b-1',
        content: text,
        recipients: ['+15553000701', '+15553000702', '+15553000703', '+15553000704'].map((p) => ({ phoneE164: p })),
      },
    });
    expect(res.status).toBe(201);
    const messages = await eventually(async () => {
      const page = (await call(svc.url, 'GET', `/messages?limit=10`, { key: t.key })).body.messages as {
        recipient: string;
        status: string;
        error: { code: string } | null;
        messageId: string;
      }[];
      return page.length === 4 && page.every((x) => x.status !== 'pending' && x.status !== 'queued') && page;
    });
    const byRecipient = new Map(messages.map((x) => [x.recipient, x]));
    for (const p of ['+15553000701', '+15553000702']) {
      expect(byRecipient.get(p)).toMatchObject({ status: 'failed', error: { code: 'RECIPIENT_OPTED_OUT' } });
      expect(reachedProvider(byRecipient.get(p)!.messageId)).toBe(false);
    }
    for (const p of ['+15553000703', '+15553000704']) expect(byRecipient.get(p)).toMatchObject({ status: 'sent' });
    expect(await used(t.customerId)).toBe(2);
  });

  it('the reply window: expiresAt = last inbound + 24 h; closed at exactly 24 h; requireReplyWindow fails fast', async () => {
    const t = await customer();
    const nowS = Math.floor(Date.now() / 1000);
    const [closed, open, never] = [number(), number(), number()];
    await inbound(t, closed.slice(1), 'hi', nowS - 86_400);
    await inbound(t, open.slice(1), 'hi', nowS - 86_400 + 3600);
    expect(await sender(t, closed)).toMatchObject({
      lastInboundAt: new Date((nowS - 86_400) * 1000).toISOString(),
      replyWindowExpiresAt: new Date(nowS * 1000).toISOString(),
    });
    const lookup = await call(svc.url, 'POST', '/inbound-senders/lookup', {
      key: t.key,
      body: { phones: [closed, open, never] },
    });
    expect(lookup.body.senders.map((s: { replyWindowExpiresAt: string | null }) => s.replyWindowExpiresAt)).toEqual([
      new Date(nowS * 1000).toISOString(),
      new Date((nowS + 3600) * 1000).toISOString(),
      null,
    ]);
    const before = await used(t.customerId);
    const refused = [
      await send(t, closed, text, { requireReplyWindow: true }),
      await send(
        t,
        never,
        { type: 'image', image: { url: 'https://example.com/a.jpg' } },
        { requireReplyWindow: true },
      ),
    ];
    for (const id of refused) {
      const m = await settled(t, id);
      expect(m).toMatchObject({ status: 'failed', attemptCount: 0, error: { code: 'REENGAGEMENT_REQUIRED' } });
      expect(m.error.message).toMatch(/template/);
      expect(reachedProvider(id)).toBe(false);
    }
    expect(await used(t.customerId)).toBe(before);
    // Inside the window, without the flag, or a template: sent.
    for (const [to, content, extra] of [
      [open, text, { requireReplyWindow: true }],
      [closed, text, {}],
      [closed, template('receipt'), { requireReplyWindow: true }],
    ] as const) {
      const id = await send(t, to, content, extra);
      expect(await settled(t, id)).toMatchObject({ status: 'sent' });
    }
  });

  it('provider error 131047 keeps REENGAGEMENT_REQUIRED, with a message that asks for a template', async () => {
    const t = await customer();
    await emu.rule({ to: '15553000901', httpStatus: 400, error: { code: 131047, message: 'Re-engagement message' } });
    await emu.rule({ to: '15553000902', asyncFailure: { code: 131047, title: 'Re-engagement message' } });
    for (const to of ['+15553000901', '+15553000902']) {
      const id = await send(t, to, text);
      const m = await eventually(async () => {
        const x = (await call(svc.url, 'GET', `/messages/${id}`, { key: t.key })).body;
        return x.status === 'failed' && x;
      });
      expect(m.error).toMatchObject({ code: 'REENGAGEMENT_REQUIRED', provider: { code: 131047 } });
      expect(m.error.message).toMatch(/24-hour reply window is closed.*template/);
    }
  });
});
