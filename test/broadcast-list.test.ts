// Broadcast names and GET /broadcasts: the name's bounds and its part in idempotency, the list
// newest first with the cursor of GET /messages, the status filter, and who sees what (other
// customers, scoped keys, sandbox keys). API only: nothing is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, createKey, createTenant, type Service, startService } from './support/harness.js';

const phone = (i: number) => `+1555${String(2_000_000 + i).padStart(7, '0')}`;
const broadcast = (externalId: string, extra: Record<string, unknown> = {}) => ({
  externalId,
  content: { type: 'text', text: 'Spring sale' },
  recipients: [{ phoneE164: phone(0) }, { phoneE164: phone(1) }],
  ...extra,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('broadcast names and GET /broadcasts', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ role: 'api' });
  });
  afterAll(() => svc.stop());

  const post = (key: string, body: unknown) => call(svc.url, 'POST', '/messages/broadcast', { key, body });
  const get = (key: string, path: string) => call(svc.url, 'GET', path, { key });
  /** Every page of GET /broadcasts<query>, following nextCursor. */
  async function allPages(key: string, query: string): Promise<any[][]> {
    const pages: any[][] = [];
    let cursor: string | null = null;
    do {
      const sep = query.includes('?') ? '&' : '?';
      const res = await get(key, `/broadcasts${query}${cursor ? `${sep}cursor=${cursor}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['broadcasts', 'nextCursor']);
      pages.push(res.body.broadcasts);
      cursor = res.body.nextCursor;
    } while (cursor !== null && pages.length < 20);
    return pages;
  }
  const ids = (list: { broadcastId: string }[]) => list.map((b) => b.broadcastId);

  it('takes a name of 1 to 200 characters, returns it in the answer and the record, and null without one', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    for (const [name, path, message] of [
      ['', 'name', 'must not be empty'],
      ['x'.repeat(201), 'name', 'must be at most 200 characters'],
      [42, 'name', 'must be string'],
    ] as const) {
      const res = await post(t.key, broadcast(`bad-${String(name).length}`, { name }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'validation_error', details: [{ path, message }] });
    }
    expect((await get(t.key, '/broadcasts')).body).toEqual({ broadcasts: [], nextCursor: null });

    for (const [externalId, name] of [
      ['one', 'a'],
      ['two-hundred', 'x'.repeat(200)],
      ['emoji', '🎉'.repeat(200)], // characters, not UTF-16 units
    ] as const) {
      const res = await post(t.key, broadcast(externalId, { name }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ externalId, name, status: 'active', recipients: 2 });
      const record = await get(t.key, `/broadcasts/${res.body.broadcastId}`);
      expect(record.body).toMatchObject({ broadcastId: res.body.broadcastId, externalId, name });
    }
    const unnamed = await post(t.key, broadcast('unnamed'));
    expect(unnamed.status).toBe(201);
    expect(unnamed.body).toHaveProperty('name', null);
    expect((await get(t.key, '/broadcasts/unnamed')).body).toHaveProperty('name', null);

    // Unknown fields are still refused.
    const unknown = await post(t.key, broadcast('unknown', { title: 'x' }));
    expect(unknown.body).toEqual({
      error: 'validation_error',
      details: [{ path: 'title', message: 'is not a known field' }],
    });
  });

  it('counts the name in the payload: a repeat with the same name is a repeat, any other name a conflict', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const first = await post(t.key, broadcast('idem', { name: 'Spring' }));
    expect(first.status).toBe(201);
    const again = await post(t.key, broadcast('idem', { name: 'Spring' }));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    for (const extra of [{ name: 'Autumn' }, {}]) {
      const res = await post(t.key, broadcast('idem', extra));
      expect(res.status, JSON.stringify(extra)).toBe(409);
      expect(res.body.error).toBe('conflict');
    }
    const plain = await post(t.key, broadcast('plain'));
    expect((await post(t.key, broadcast('plain'))).status).toBe(200);
    expect((await post(t.key, broadcast('plain', { name: 'Later' }))).status).toBe(409);
    expect((await get(t.key, '/broadcasts/plain')).body.name).toBeNull();
    expect((await get(t.key, '/broadcasts')).body.broadcasts.map((b: any) => b.externalId)).toEqual(['plain', 'idem']);
    expect(plain.body.name).toBeNull();
  });

  it('lists newest first, a page at a time with the cursor of GET /messages, each item the GET /broadcasts/{id} record', async () => {
    const t = await createTenant(svc.url, { plan: 'basic' });
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(t.key, broadcast(`list-${i}`, i % 2 === 0 ? { name: `List ${i}` } : {}));
      expect(res.status).toBe(201);
      created.push(res.body.broadcastId);
      await sleep(3); // distinct createdAt, so the expected order is the creation order
    }
    const newestFirst = [...created].reverse();
    const all = await get(t.key, '/broadcasts');
    expect(all.status).toBe(200);
    expect(ids(all.body.broadcasts)).toEqual(newestFirst);
    expect(all.body.nextCursor).toBeNull();
    for (const b of all.body.broadcasts) expect((await get(t.key, `/broadcasts/${b.broadcastId}`)).body).toEqual(b);
    expect(all.body.broadcasts[0]).toMatchObject({
      externalId: 'list-4',
      name: 'List 4',
      chatAccountId: t.accountId,
      status: 'active',
      recipients: 2,
      counts: { pending: 2, queued: 0, sent: 0, delivered: 0, read: 0, failed: 0 },
      cancelledMessages: 0,
      cancelledAt: null,
    });
    expect(all.body.broadcasts[1].name).toBeNull();

    const pages = await allPages(t.key, '?limit=2');
    expect(pages.map(ids)).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
    expect(pages.flat()).toEqual(all.body.broadcasts);
    expect((await allPages(t.key, '?limit=5')).map(ids)).toEqual([newestFirst]);
    // A broadcast created after the first page was read does not shift the later pages.
    const first = await get(t.key, '/broadcasts?limit=2');
    await post(t.key, broadcast('list-late'));
    const second = await get(t.key, `/broadcasts?limit=2&cursor=${first.body.nextCursor}`);
    expect(ids(second.body.broadcasts)).toEqual(newestFirst.slice(2, 4));

    for (const query of ['?limit=0', '?limit=101', '?limit=x', '?order=asc', '?status=done']) {
      const res = await get(t.key, `/broadcasts${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toBe('validation_error');
    }
    expect(await get(t.key, '/broadcasts?cursor=zzz')).toMatchObject({
      status: 400,
      body: { error: 'invalid_cursor' },
    });
  });

  it('filters by status (active, completed, cancelled) as the record derives it, with paging', async () => {
    const t = await createTenant(svc.url, { plan: 'pro' });
    const make = async (externalId: string) => {
      const res = await post(t.key, broadcast(externalId));
      await sleep(3);
      return res.body.broadcastId as string;
    };
    const active1 = await make('active-1');
    const completed = await make('completed');
    const cancelled = await make('cancelled');
    const active2 = await make('active-2');
    const partlySent = await make('partly-sent');
    await svc.db.query(`UPDATE messages SET status = 'sent' WHERE broadcast_id = $1`, [completed]);
    await svc.db.query(
      `UPDATE messages SET status = 'sent' WHERE broadcast_id = $1 AND external_id = 'partly-sent:0'`,
      [partlySent],
    );
    expect((await call(svc.url, 'POST', `/broadcasts/${cancelled}/cancel`, { key: t.key })).status).toBe(200);

    const byStatus = async (status: string) => {
      const pages = await allPages(t.key, `?status=${status}&limit=1`);
      const list = pages.flat();
      for (const b of list) expect(b.status).toBe(status);
      return ids(list);
    };
    expect(await byStatus('active')).toEqual([partlySent, active2, active1]);
    expect(await byStatus('completed')).toEqual([completed]);
    expect(await byStatus('cancelled')).toEqual([cancelled]);
    expect(ids((await get(t.key, '/broadcasts')).body.broadcasts)).toEqual([
      partlySent,
      active2,
      cancelled,
      completed,
      active1,
    ]);
  });

  it("never shows another customer's broadcasts; a scoped key sees its account's only; sandbox keys see none and never create", async () => {
    const t = await createTenant(svc.url, { plan: 'pro', accounts: 2 });
    const [a1, a2] = t.accountIds;
    const other = await createTenant(svc.url, { plan: 'pro' });
    const mine1 = (await post(t.key, broadcast('acc-1', { chatAccountId: a1, name: 'One' }))).body.broadcastId;
    await sleep(3);
    const mine2 = (await post(t.key, broadcast('acc-2', { chatAccountId: a2, name: 'Two' }))).body.broadcastId;
    const theirs = (await post(other.key, broadcast('acc-1', { name: 'Theirs' }))).body.broadcastId;
    expect([mine1, mine2, theirs].every((id) => typeof id === 'string')).toBe(true);

    expect(ids((await get(t.key, '/broadcasts')).body.broadcasts)).toEqual([mine2, mine1]);
    expect(ids((await get(other.key, '/broadcasts')).body.broadcasts)).toEqual([theirs]);
    // A cursor is only a position: another customer's key pages through its own broadcasts with it.
    const ourFirst = await get(t.key, '/broadcasts?limit=1');
    expect((await get(other.key, `/broadcasts?cursor=${ourFirst.body.nextCursor}`)).body.broadcasts).toEqual([]);

    const scoped = await createKey(svc.url, t.customerId, { chatAccountId: a2 });
    expect(ids((await get(scoped, '/broadcasts')).body.broadcasts)).toEqual([mine2]);
    expect((await get(scoped, `/broadcasts/${mine1}`)).status).toBe(404);
    const scopedFirst = await createKey(svc.url, t.customerId, { chatAccountId: a1 });
    const firstPage = await get(t.key, '/broadcasts?limit=1');
    expect(ids(firstPage.body.broadcasts)).toEqual([mine2]);
    expect(ids((await get(scopedFirst, `/broadcasts?cursor=${firstPage.body.nextCursor}`)).body.broadcasts)).toEqual([
      mine1,
    ]);

    // Sandbox keys read no live data (every broadcast is live: decision 0024-sandbox-keys) and cannot
    // broadcast, named or not.
    expect((await get(t.sandboxKey, '/broadcasts')).body).toEqual({ broadcasts: [], nextCursor: null });
    expect((await get(t.sandboxKey, `/broadcasts/${mine1}`)).status).toBe(404);
    expect(await post(t.sandboxKey, broadcast('sandboxed', { name: 'Sandbox' }))).toMatchObject({
      status: 403,
      body: { error: 'sandbox_not_supported' },
    });
    // Plans without broadcasts have none to list; the read is not a plan feature, as GET /broadcasts/{id}.
    const free = await createTenant(svc.url, { plan: 'free' });
    expect(await get(free.key, '/broadcasts')).toMatchObject({
      status: 200,
      body: { broadcasts: [], nextCursor: null },
    });
    expect((await call(svc.url, 'GET', '/broadcasts')).status).toBe(401);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await call(svc.url, 'GET', '/openapi.json')).body;
    const params = doc.paths['/broadcasts'].get.parameters.map((p: { name: string }) => p.name).sort();
    expect(params).toEqual(['cursor', 'limit', 'status']);
    const body = doc.paths['/messages/broadcast'].post.requestBody.content['application/json'].schema;
    expect(body.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    expect(body.required).not.toContain('name');
  });
});
