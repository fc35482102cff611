// The template catalog through the real service and the real emulator over HTTP: listing with
// filters and pages, creation, every validation class, every provider answer mapped, the gates,
// and capabilities.templateManagement in GET /chat-accounts.
import crypto from 'node:crypto';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { type Emulator, providerEnv, startEmulator } from './support/emulator.js';
import { call, createAccount, createKey, type Service, startService } from './support/harness.js';

const MGMT_TOKEN = 'EAAG-management-secret-0123456789';

describe('template catalog', () => {
  let emu: Emulator;
  let svc: Service;

  beforeAll(async () => {
    emu = await startEmulator();
    svc = await startService({ env: providerEnv(emu), role: 'api' });
  });
  afterAll(async () => {
    await svc.stop();
    await emu.stop();
  });
  beforeEach(async () => {
    await emu.clearRules();
  });

  type Setup = {
    customerId: string;
    accountId: string;
    wabaId: string;
    none: string;
    read: string;
    manage: string;
    sandbox: string;
  };
  const tenant = async (opts: { plan?: string; managementToken?: string | null } = {}): Promise<Setup> => {
    const customer = await call(svc.url, 'POST', '/admin/customers', {
      admin: true,
      body: { name: 'Templates', plan: opts.plan ?? 'pro' },
    });
    const customerId = customer.body.id as string;
    const wabaId = `waba${crypto.randomBytes(5).toString('hex')}`;
    const managementToken = opts.managementToken === undefined ? MGMT_TOKEN : opts.managementToken;
    const accountId = await createAccount(svc.url, customerId, {
      official: {
        phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
        wabaId,
        accessToken: 'EAAG-send-token',
        ...(managementToken !== null ? { managementToken } : {}),
      },
    });
    await emu.waba(wabaId, { managementToken: MGMT_TOKEN });
    return {
      customerId,
      accountId,
      wabaId,
      none: await createKey(svc.url, customerId, {}),
      read: await createKey(svc.url, customerId, { templateAccess: 'read' }),
      manage: await createKey(svc.url, customerId, { templateAccess: 'manage' }),
      sandbox: await createKey(svc.url, customerId, { templateAccess: 'manage', sandbox: true }),
    };
  };
  const list = (key: string, accountId: string, qs = '') =>
    call(svc.url, 'GET', `/chat-accounts/${accountId}/templates${qs}`, { key });
  const create = (key: string, accountId: string, body: unknown) =>
    call(svc.url, 'POST', `/chat-accounts/${accountId}/templates`, { key, body });
  const named = (over: Record<string, unknown> = {}) => ({
    name: 'order_shipped',
    language: 'en_US',
    category: 'UTILITY',
    parameterFormat: 'NAMED',
    body: 'Hi {{first_name}}, your order ships {{eta}}.',
    examples: [
      { name: 'first_name', text: 'Pablo' },
      { name: 'eta', text: 'Friday' },
    ],
    ...over,
  });
  const templateCalls = (wabaId: string) => emu.state.templateCalls.filter((c) => c.wabaId === wabaId);
  const account = async (key: string, id: string) =>
    (await call(svc.url, 'GET', '/chat-accounts', { key })).body.accounts.find((a: { id: string }) => a.id === id);

  describe('listing', () => {
    it('pages through the catalog with the management token until nextCursor is null', async () => {
      const t = await tenant();
      const seeded = (
        await emu.seedTemplates(
          t.wabaId,
          Array.from({ length: 7 }, (_, i) => ({
            name: `tpl_${i}`,
            components: [{ type: 'BODY', text: `Hello {{1}} #${i}` }],
          })),
        )
      ).templates;
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const res = await list(t.read, t.accountId, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        pages.push(res.body.templates.map((x: { name: string }) => x.name));
        cursor = res.body.nextCursor;
      } while (cursor !== null && pages.length < 10);
      expect(pages).toEqual([['tpl_0', 'tpl_1', 'tpl_2'], ['tpl_3', 'tpl_4', 'tpl_5'], ['tpl_6']]);
      const calls = templateCalls(t.wabaId);
      expect(calls).toHaveLength(3);
      expect(calls.every((c) => c.token === MGMT_TOKEN && c.operation === 'list' && c.query.limit === '3')).toBe(true);
      expect(calls[0]!.query.fields).toContain('quality_score');
      expect(calls[0]!.query.after).toBeUndefined();
      expect(calls[1]!.query.after).toEqual(expect.any(String));
      // The provider's own cursor is wrapped, not passed through.
      const first = await list(t.read, t.accountId, '?limit=3');
      expect(first.body.nextCursor).not.toBe(calls[1]!.query.after);
      expect(first.body.templates[0]).toEqual({
        id: seeded[0].id,
        name: 'tpl_0',
        language: 'en_US',
        category: 'UTILITY',
        status: 'APPROVED',
        rejectedReason: null,
        parameterFormat: 'POSITIONAL',
        parameterCount: 1,
        components: [{ type: 'BODY', text: 'Hello {{1}} #0' }],
      });
      // An exact fit: a full last page still ends with null when the provider gives no paging.next.
      const whole = await list(t.read, t.accountId, '?limit=7');
      expect(whole.body).toMatchObject({ nextCursor: null });
      expect(whole.body.templates).toHaveLength(7);
      expect(templateCalls(t.wabaId).at(-1)!.query.limit).toBe('7');
      await list(t.read, t.accountId);
      expect(templateCalls(t.wabaId).at(-1)!.query.limit).toBe('50'); // the default page
    });

    it('filters by status and by a part of the name, and shows review outcomes and quality', async () => {
      const t = await tenant();
      const [a, b] = (
        await emu.seedTemplates(t.wabaId, [
          {
            name: 'order_shipped',
            components: [{ type: 'BODY', text: 'Order {{order}} for {{who}}' }],
            parameter_format: 'NAMED',
          },
          { name: 'order_delayed', status: 'PENDING', components: [{ type: 'BODY', text: 'Sorry' }] },
          { name: 'welcome', category: 'MARKETING', components: [{ type: 'BODY', text: 'Hi {{1}}' }] },
        ])
      ).templates;
      await emu.reviewTemplate(t.wabaId, b.id, { status: 'REJECTED', rejectedReason: 'INVALID_FORMAT' });
      await emu.reviewTemplate(t.wabaId, a.id, { qualityScore: 'GREEN' });
      const rejected = await list(t.manage, t.accountId, '?status=REJECTED');
      expect(rejected.body).toEqual({
        templates: [
          expect.objectContaining({
            name: 'order_delayed',
            status: 'REJECTED',
            rejectedReason: 'INVALID_FORMAT',
            parameterCount: 0,
          }),
        ],
        nextCursor: null,
      });
      const orders = await list(t.read, t.accountId, '?name=order');
      expect(orders.body.templates.map((x: { name: string }) => x.name)).toEqual(['order_shipped', 'order_delayed']);
      expect(orders.body.templates[0]).toMatchObject({
        parameterFormat: 'NAMED',
        parameterCount: 2,
        qualityScore: { score: 'GREEN', date: expect.stringMatching(/^\d{4}-.*Z$/) },
      });
      expect(orders.body.templates[1]).not.toHaveProperty('qualityScore');
      const both = await list(t.read, t.accountId, '?status=APPROVED&name=ord');
      expect(both.body.templates.map((x: { name: string }) => x.name)).toEqual(['order_shipped']);
      expect(templateCalls(t.wabaId).at(-1)!.query).toMatchObject({ status: 'APPROVED', name: 'ord' });
      expect((await list(t.read, t.accountId, '?status=PAUSED')).body).toEqual({ templates: [], nextCursor: null });
    });
  });

  describe('creation', () => {
    it('creates a NAMED template: 201 PENDING, stored at the provider with named examples, then reviewed', async () => {
      const t = await tenant();
      const res = await create(t.manage, t.accountId, named());
      expect(res.status).toBe(201);
      const component = {
        type: 'BODY',
        text: 'Hi {{first_name}}, your order ships {{eta}}.',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Pablo' },
            { param_name: 'eta', example: 'Friday' },
          ],
        },
      };
      expect(res.body).toEqual({
        id: expect.stringMatching(/^\d+$/),
        name: 'order_shipped',
        language: 'en_US',
        category: 'UTILITY',
        status: 'PENDING',
        rejectedReason: null,
        parameterFormat: 'NAMED',
        parameterCount: 2,
        components: [component],
      });
      const stored = emu.state.templates.get(t.wabaId)!;
      expect(stored).toEqual([
        expect.objectContaining({
          id: res.body.id,
          name: 'order_shipped',
          category: 'UTILITY',
          parameter_format: 'NAMED',
          components: [component],
        }),
      ]);
      expect(templateCalls(t.wabaId)).toEqual([expect.objectContaining({ operation: 'create', token: MGMT_TOKEN })]);
      await emu.reviewTemplate(t.wabaId, res.body.id, { status: 'APPROVED' });
      expect((await list(t.read, t.accountId)).body.templates).toEqual([{ ...res.body, status: 'APPROVED' }]);
    });

    it('creates a POSITIONAL template with examples in variable order, answering the category the provider chose', async () => {
      const t = await tenant();
      await emu.waba(t.wabaId, { forceCategory: 'MARKETING' });
      const res = await create(t.manage, t.accountId, {
        name: 'two_vars',
        language: 'es',
        category: 'UTILITY',
        parameterFormat: 'POSITIONAL',
        body: 'Hola {{2}}, tu pedido {{1}} llega {{2}}.',
        examples: [
          { name: '2', text: 'Ana' },
          { name: '1', text: '#42' },
        ],
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'two_vars',
        language: 'es',
        category: 'MARKETING',
        status: 'PENDING',
        parameterFormat: 'POSITIONAL',
        parameterCount: 2,
      });
      expect(emu.state.templates.get(t.wabaId)![0]).toMatchObject({
        parameter_format: 'POSITIONAL',
        components: [{ example: { body_text: [['#42', 'Ana']] } }],
      });
      const noVars = await create(t.manage, t.accountId, {
        name: 'plain',
        language: 'en',
        category: 'MARKETING',
        parameterFormat: 'POSITIONAL',
        body: 'Thanks for shopping.',
      });
      expect(noVars).toMatchObject({
        status: 201,
        body: { parameterCount: 0, components: [{ type: 'BODY', text: 'Thanks for shopping.' }] },
      });
    });
  });

  describe('validation', () => {
    const cases: [string, unknown, { path: string; message?: unknown }[]][] = [
      [
        'name pattern',
        named({ name: 'Order-Shipped' }),
        [{ path: 'name', message: 'must contain only lower-case letters, digits and underscores' }],
      ],
      [
        'missing fields',
        { name: 'x' },
        [{ path: 'language' }, { path: 'category' }, { path: 'parameterFormat' }, { path: 'body' }],
      ],
      ['unknown field', named({ headline: 'Hi' }), [{ path: 'headline', message: 'is not a known field' }]],
      [
        'category',
        named({ category: 'TRANSACTIONAL' }),
        [{ path: 'category', message: 'must be one of "MARKETING", "UTILITY", "AUTHENTICATION"' }],
      ],
      ['parameterFormat', named({ parameterFormat: 'named' }), [{ path: 'parameterFormat' }]],
      ['language', named({ language: 'English' }), [{ path: 'language' }]],
      [
        'body length',
        named({ body: 'x'.repeat(1025), examples: [] }),
        [{ path: 'body', message: 'must be at most 1024 characters' }],
      ],
      [
        'example shape',
        named({ examples: [{ name: 'first_name' }] }),
        [{ path: 'examples.0.text', message: 'is required' }],
      ],
      [
        'mixed variables',
        named({ body: 'Hi {{first_name}} {{1}}.' }),
        [{ path: 'body', message: expect.stringContaining('must not mix') }],
      ],
      [
        'NAMED with positional variables',
        named({ body: 'Hi {{1}}.', examples: [{ name: '1', text: 'a' }] }),
        [{ path: 'parameterFormat', message: expect.stringContaining('NAMED') }],
      ],
      [
        'POSITIONAL with named variables',
        named({ parameterFormat: 'POSITIONAL' }),
        [{ path: 'parameterFormat', message: expect.stringContaining('POSITIONAL') }],
      ],
      [
        'positional gap',
        named({
          parameterFormat: 'POSITIONAL',
          body: 'A {{1}} B {{3}}.',
          examples: [
            { name: '1', text: 'a' },
            { name: '3', text: 'c' },
          ],
        }),
        [{ path: 'body', message: 'positional variables must be numbered 1 to 2 without gaps' }],
      ],
      [
        'malformed variable',
        named({ body: 'Hi {{first name}}.' }),
        [{ path: 'body', message: expect.stringContaining('invalid variables') }],
      ],
      [
        'missing example',
        named({ examples: [{ name: 'first_name', text: 'P' }] }),
        [{ path: 'examples', message: expect.stringContaining('{{eta}}') }],
      ],
      [
        'unknown and repeated examples',
        named({
          examples: [
            { name: 'first_name', text: 'P' },
            { name: 'eta', text: 'F' },
            { name: 'eta', text: 'G' },
            { name: 'zip', text: 'Z' },
          ],
        }),
        [
          { path: 'examples.2.name', message: 'has an example already' },
          { path: 'examples.3.name', message: expect.stringContaining('is not a variable') },
        ],
      ],
    ];
    it.each(cases)('refuses %s with 400 validation_error and no provider call', async (_what, body, details) => {
      const t = await tenant();
      const res = await create(t.manage, t.accountId, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_error');
      expect(res.body.details).toEqual(
        details.map((d) => ({ path: d.path, message: d.message ?? expect.any(String) })),
      );
      expect(templateCalls(t.wabaId)).toHaveLength(0);
    });

    it('refuses bad list queries and cursors', async () => {
      const t = await tenant();
      const other = await tenant();
      for (const [qs, path] of [
        ['?limit=0', 'limit'],
        ['?limit=101', 'limit'],
        ['?limit=abc', 'limit'],
        ['?status=approved', 'status'],
        ['?sort=name', 'sort'],
        ['?name=', 'name'],
      ] as const) {
        const res = await list(t.read, t.accountId, qs);
        expect(res, qs).toMatchObject({ status: 400, body: { error: 'validation_error', details: [{ path }] } });
      }
      await emu.seedTemplates(other.wabaId, [{ name: 'a' }, { name: 'b' }]);
      const foreignCursor = (await list(other.read, other.accountId, '?limit=1')).body.nextCursor;
      expect(foreignCursor).toEqual(expect.any(String));
      for (const cursor of ['garbage!', 'eyJ4IjoxfQ', foreignCursor]) {
        expect(await list(t.read, t.accountId, `?cursor=${encodeURIComponent(cursor)}`)).toMatchObject({
          status: 400,
          body: { error: 'invalid_cursor' },
        });
      }
      expect(templateCalls(t.wabaId)).toHaveLength(0);
    });
  });

  describe('provider answers', () => {
    it('answers 409 template_already_exists for a duplicate name and language', async () => {
      const t = await tenant();
      expect((await create(t.manage, t.accountId, named())).status).toBe(201);
      const dup = await create(t.manage, t.accountId, named());
      expect(dup).toMatchObject({
        status: 409,
        body: {
          error: 'template_already_exists',
          provider: {
            code: 100,
            subcode: 2388024,
            userTitle: 'Content in this language already exists',
            fbtraceId: expect.stringMatching(/^Emu/),
          },
        },
      });
      expect((await create(t.manage, t.accountId, named({ language: 'fr' }))).status).toBe(201);
    });

    it('answers 422 template_rejected_by_provider with a sanitized detail', async () => {
      const t = await tenant();
      const atEnd = await create(
        t.manage,
        t.accountId,
        named({ body: 'Your order ships {{eta}}', examples: [{ name: 'eta', text: 'Friday' }] }),
      );
      expect(atEnd).toMatchObject({
        status: 422,
        body: {
          error: 'template_rejected_by_provider',
          message: "Variables can't be at the start or end of the template",
          provider: { httpStatus: 400, code: 100, subcode: 2388299, fbtraceId: expect.any(String) },
        },
      });
      await emu.rule({
        templateOperation: 'create',
        wabaId: t.wabaId,
        httpStatus: 400,
        error: { code: 100, subcode: 2388072, message: `Body format incorrect (token ${MGMT_TOKEN})` },
        userTitle: `Invalid body ${MGMT_TOKEN}`,
      });
      const res = await create(t.manage, t.accountId, named());
      expect(res).toMatchObject({
        status: 422,
        body: {
          error: 'template_rejected_by_provider',
          provider: {
            code: 100,
            subcode: 2388072,
            message: expect.stringContaining('[redacted]'),
            userTitle: 'Invalid body [redacted]',
          },
        },
      });
      expect(JSON.stringify(res.body)).not.toContain(MGMT_TOKEN);
      expect(JSON.stringify(res.body)).not.toContain('body_text_named_params'); // never our payload
    });

    it('answers 429 provider_rate_limited with Retry-After', async () => {
      const t = await tenant();
      await emu.rule({
        templateOperation: 'list',
        wabaId: t.wabaId,
        times: 1,
        httpStatus: 400,
        error: { code: 80007, message: 'WABA rate limit reached' },
      });
      const waba = await list(t.read, t.accountId);
      expect(waba).toMatchObject({ status: 429, body: { error: 'provider_rate_limited', provider: { code: 80007 } } });
      expect(waba.headers.get('retry-after')).toBe('60');
      await emu.rule({
        templateOperation: 'create',
        wabaId: t.wabaId,
        times: 1,
        httpStatus: 400,
        error: { code: 4, message: 'Application request limit reached' },
        retryAfter: 120,
      });
      const app = await create(t.manage, t.accountId, named());
      expect(app).toMatchObject({ status: 429, body: { error: 'provider_rate_limited', provider: { code: 4 } } });
      expect(app.headers.get('retry-after')).toBe('120');
      await emu.rule({ templateOperation: 'any', wabaId: t.wabaId, times: 1, httpStatus: 429 });
      expect(await list(t.read, t.accountId)).toMatchObject({
        status: 429,
        body: { error: 'provider_rate_limited', provider: { httpStatus: 429, code: null } },
      });
      expect((await list(t.read, t.accountId)).status).toBe(200); // the rules were used up
    });

    it('answers 503 provider_unavailable for provider 5xx and transient codes', async () => {
      const t = await tenant();
      await emu.rule({ templateOperation: 'list', wabaId: t.wabaId, times: 1, httpStatus: 500 });
      expect(await list(t.read, t.accountId)).toMatchObject({
        status: 503,
        body: { error: 'provider_unavailable', provider: { httpStatus: 500 } },
      });
      await emu.rule({
        templateOperation: 'create',
        wabaId: t.wabaId,
        times: 1,
        httpStatus: 503,
        error: { code: 2, message: 'Service temporarily unavailable' },
      });
      expect(await create(t.manage, t.accountId, named())).toMatchObject({
        status: 503,
        body: { error: 'provider_unavailable', provider: { code: 2 } },
      });
      expect(emu.state.templates.get(t.wabaId) ?? []).toHaveLength(0);
    });

    it('answers 503 provider_unreachable when the provider hangs past the timeout', async () => {
      const t = await tenant();
      await emu.rule({ templateOperation: 'list', wabaId: t.wabaId, times: 1, hang: true });
      const started = Date.now();
      expect(await list(t.read, t.accountId)).toMatchObject({
        status: 503,
        body: { error: 'provider_unreachable', message: 'the provider did not answer in time' },
      });
      // Ordering, not a latency bound: the answer waited for the provider timeout (a lower bound,
      // which a slow machine cannot break), and came while the provider still held the request (the
      // emulator ends a hang only after 120 s, with a 504 that would read provider_unavailable).
      expect(Date.now() - started).toBeGreaterThanOrEqual(svc.config.providerTimeoutMs - 50);
    });

    it('answers 503 provider_unreachable when nothing listens at the provider address', async () => {
      const offline = await startService({
        role: 'api',
        env: { PROVIDER_BASE_URL: 'http://127.0.0.1:9', PROVIDER_TIMEOUT_MS: '2000' },
      });
      try {
        const customer = await call(offline.url, 'POST', '/admin/customers', {
          admin: true,
          body: { name: 'Offline', plan: 'starter' },
        });
        const accountId = await createAccount(offline.url, customer.body.id, {
          official: {
            phoneNumberId: 'pn-offline',
            wabaId: 'w-offline',
            accessToken: 'EAAG-x',
            managementToken: MGMT_TOKEN,
          },
        });
        const key = await createKey(offline.url, customer.body.id, { templateAccess: 'manage' });
        expect(await call(offline.url, 'GET', `/chat-accounts/${accountId}/templates`, { key })).toMatchObject({
          status: 503,
          body: { error: 'provider_unreachable', message: 'could not reach the provider' },
        });
        expect(
          await call(offline.url, 'POST', `/chat-accounts/${accountId}/templates`, { key, body: named() }),
        ).toMatchObject({ status: 503, body: { error: 'provider_unreachable' } });
      } finally {
        await offline.stop();
      }
    });

    it('answers 422 template_management_unavailable without a credential, and when the provider rejects it', async () => {
      const bare = await tenant({ managementToken: null });
      expect(await list(bare.read, bare.accountId)).toMatchObject({
        status: 422,
        body: {
          error: 'template_management_unavailable',
          message: expect.stringContaining('no management credential'),
        },
      });
      expect(await create(bare.manage, bare.accountId, named())).toMatchObject({
        status: 422,
        body: { error: 'template_management_unavailable' },
      });
      expect(templateCalls(bare.wabaId)).toHaveLength(0);

      const wrong = await tenant({ managementToken: 'EAAG-stale-management-token' });
      const res = await list(wrong.read, wrong.accountId);
      expect(res).toMatchObject({
        status: 422,
        body: {
          error: 'template_management_unavailable',
          message: expect.stringContaining('rejected the management credential'),
          provider: { httpStatus: 401, code: 190 },
        },
      });
      expect(JSON.stringify(res.body)).not.toContain('EAAG-stale-management-token');
      await emu.rule({
        templateOperation: 'create',
        wabaId: wrong.wabaId,
        times: 1,
        httpStatus: 403,
        error: { code: 200, message: 'Permission denied' },
      });
      await call(svc.url, 'PATCH', `/admin/chat-accounts/${wrong.accountId}`, {
        admin: true,
        body: { official: { managementToken: MGMT_TOKEN } },
      });
      expect(await create(wrong.manage, wrong.accountId, named())).toMatchObject({
        status: 422,
        body: { error: 'template_management_unavailable', message: expect.stringContaining('permission') },
      });
      expect((await create(wrong.manage, wrong.accountId, named())).status).toBe(201);
    });
  });

  describe('gates', () => {
    it('needs templateAccess read to list and manage to create', async () => {
      const t = await tenant();
      expect(await list(t.none, t.accountId)).toMatchObject({
        status: 403,
        body: { error: 'template_access_insufficient' },
      });
      expect(await create(t.none, t.accountId, named())).toMatchObject({
        status: 403,
        body: { error: 'template_access_insufficient' },
      });
      expect(await create(t.read, t.accountId, named())).toMatchObject({
        status: 403,
        body: { error: 'template_access_insufficient' },
      });
      expect((await list(t.read, t.accountId)).status).toBe(200);
      expect((await list(t.manage, t.accountId)).status).toBe(200);
      expect(templateCalls(t.wabaId).map((c) => c.operation)).toEqual(['list', 'list']);
    });

    it('is a plan feature from Starter: Free answers 403 feature_not_available', async () => {
      const free = await tenant({ plan: 'free' });
      expect(await list(free.read, free.accountId)).toMatchObject({
        status: 403,
        body: { error: 'feature_not_available', plan: 'free' },
      });
      expect(await create(free.manage, free.accountId, named())).toMatchObject({
        status: 403,
        body: { error: 'feature_not_available', plan: 'free' },
      });
      expect(await list(free.sandbox, free.accountId)).toMatchObject({
        status: 403,
        body: { error: 'feature_not_available' },
      });
      const starter = await tenant({ plan: 'starter' });
      expect((await list(starter.read, starter.accountId)).status).toBe(200);
      expect((await create(starter.manage, starter.accountId, named())).status).toBe(201);
    });

    it('keeps scoped keys to their account and hides other customers’ accounts', async () => {
      const t = await tenant();
      const second = await createAccount(svc.url, t.customerId, {
        official: {
          phoneNumberId: `pn${crypto.randomBytes(5).toString('hex')}`,
          wabaId: t.wabaId,
          accessToken: 'x',
          managementToken: MGMT_TOKEN,
        },
      });
      const scoped = await createKey(svc.url, t.customerId, { templateAccess: 'manage', chatAccountId: second });
      expect(await list(scoped, t.accountId)).toMatchObject({ status: 403, body: { error: 'key_scope_violation' } });
      expect(await create(scoped, t.accountId, named())).toMatchObject({
        status: 403,
        body: { error: 'key_scope_violation' },
      });
      expect((await list(scoped, second)).status).toBe(200);
      const other = await tenant();
      expect(await list(other.manage, t.accountId)).toMatchObject({
        status: 404,
        body: { error: 'account_not_found' },
      });
      expect(await create(other.manage, t.accountId, named())).toMatchObject({
        status: 404,
        body: { error: 'account_not_found' },
      });
      expect(await list(t.read, crypto.randomUUID())).toMatchObject({
        status: 404,
        body: { error: 'account_not_found' },
      });
      expect(await list(t.read, 'not-a-uuid')).toMatchObject({
        status: 400,
        body: { error: 'validation_error', details: [{ path: 'accountId' }] },
      });
    });

    it('has no catalog for DIRECT accounts', async () => {
      const t = await tenant();
      const direct = await createAccount(svc.url, t.customerId, {
        type: 'DIRECT',
        phoneNumber: '+15550100999',
        displayName: 'Direct',
        official: undefined,
      });
      expect(await list(t.read, direct)).toMatchObject({
        status: 422,
        body: { error: 'template_management_unavailable', message: expect.stringContaining('OFFICIAL') },
      });
      const view = await account(t.read, direct);
      expect(view.capabilities.templateManagement).toEqual({ supported: false, enabled: false, verifiedAt: null });
    });

    it('lets sandbox keys read the real catalog but not create at the provider', async () => {
      const t = await tenant();
      await emu.seedTemplates(t.wabaId, [{ name: 'real_one' }]);
      expect((await list(t.sandbox, t.accountId)).body.templates.map((x: { name: string }) => x.name)).toEqual([
        'real_one',
      ]);
      expect(await create(t.sandbox, t.accountId, named())).toMatchObject({
        status: 403,
        body: { error: 'sandbox_not_supported' },
      });
      expect(emu.state.templates.get(t.wabaId)).toHaveLength(1);
    });
  });

  describe('capabilities.templateManagement in GET /chat-accounts', () => {
    it('is enabled with a credential on Starter and up, and verifiedAt follows the credential', async () => {
      const t = await tenant();
      expect((await account(t.read, t.accountId)).capabilities.templateManagement).toEqual({
        supported: true,
        enabled: true,
        verifiedAt: null,
      });

      const before = Date.now();
      expect((await list(t.read, t.accountId)).status).toBe(200);
      const verifiedAt = (await account(t.read, t.accountId)).capabilities.templateManagement.verifiedAt;
      expect(Date.parse(verifiedAt)).toBeGreaterThanOrEqual(before - 1000);

      // A new credential is unproven until a call with it succeeds.
      await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
        admin: true,
        body: { official: { managementToken: 'EAAG-new-management-token' } },
      });
      expect((await account(t.read, t.accountId)).capabilities.templateManagement).toEqual({
        supported: true,
        enabled: true,
        verifiedAt: null,
      });
      expect((await list(t.read, t.accountId)).status).toBe(422); // the provider does not know it yet
      expect((await account(t.read, t.accountId)).capabilities.templateManagement.verifiedAt).toBeNull();
      await emu.waba(t.wabaId, { managementToken: 'EAAG-new-management-token' });
      expect((await create(t.manage, t.accountId, named())).status).toBe(201);
      expect((await account(t.read, t.accountId)).capabilities.templateManagement.verifiedAt).toEqual(
        expect.stringMatching(/Z$/),
      );

      // Removing the credential disables the catalog.
      await call(svc.url, 'PATCH', `/admin/chat-accounts/${t.accountId}`, {
        admin: true,
        body: { official: { managementToken: null } },
      });
      expect((await account(t.read, t.accountId)).capabilities.templateManagement).toEqual({
        supported: true,
        enabled: false,
        verifiedAt: null,
      });
    });

    it('is disabled without a credential and on plan Free', async () => {
      const bare = await tenant({ managementToken: null });
      expect((await account(bare.read, bare.accountId)).capabilities.templateManagement).toEqual({
        supported: true,
        enabled: false,
        verifiedAt: null,
      });
      const free = await tenant({ plan: 'free' });
      expect((await account(free.read, free.accountId)).capabilities.templateManagement).toEqual({
        supported: true,
        enabled: false,
        verifiedAt: null,
      });
    });
  });
});
