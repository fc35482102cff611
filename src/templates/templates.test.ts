import { describe, expect, it } from 'vitest';

import type { ManagementOutcome } from '../provider/cloud-api.js';
import { toTemplateError } from './provider-errors.js';
import { nextCursorOf, unwrapCursor, wrapCursor } from './template-cursor.js';
import { checkDefinition, createPayload, type CreateTemplateRequest } from './template-definition.js';
import { toTemplate } from './template-view.js';

const def = (over: Partial<CreateTemplateRequest>): CreateTemplateRequest => ({
  name: 'order_update',
  language: 'en_US',
  category: 'UTILITY',
  parameterFormat: 'NAMED',
  body: 'Hi {{first_name}}, ships {{eta}}.',
  examples: [
    { name: 'first_name', text: 'Ann' },
    { name: 'eta', text: 'Friday' },
  ],
  ...over,
});

describe('template definitions', () => {
  it('accepts matching named and positional definitions', () => {
    expect(checkDefinition(def({}))).toEqual([]);
    expect(
      checkDefinition(
        def({
          parameterFormat: 'POSITIONAL',
          body: 'Hi {{2}} and {{1}} and {{1}}.',
          examples: [
            { name: '1', text: 'a' },
            { name: '2', text: 'b' },
          ],
        }),
      ),
    ).toEqual([]);
    expect(checkDefinition(def({ body: 'No variables.', examples: undefined }))).toEqual([]);
  });

  it('refuses mixed, mismatched, gapped, malformed variables and wrong examples', () => {
    expect(checkDefinition(def({ body: 'Hi {{name}} {{1}}.' }))).toEqual([
      { path: 'body', message: expect.stringContaining('must not mix') },
    ]);
    expect(checkDefinition(def({ parameterFormat: 'POSITIONAL' }))).toContainEqual({
      path: 'parameterFormat',
      message: expect.stringContaining('POSITIONAL'),
    });
    expect(checkDefinition(def({ body: 'Hi {{1}}.', examples: [{ name: '1', text: 'a' }] }))).toContainEqual({
      path: 'parameterFormat',
      message: expect.stringContaining('NAMED'),
    });
    expect(
      checkDefinition(
        def({
          parameterFormat: 'POSITIONAL',
          body: 'Hi {{1}} {{3}}.',
          examples: [
            { name: '1', text: 'a' },
            { name: '3', text: 'c' },
          ],
        }),
      ),
    ).toContainEqual({ path: 'body', message: expect.stringContaining('1 to 2') });
    expect(checkDefinition(def({ body: 'Hi {{First Name}}.' }))[0]).toMatchObject({
      path: 'body',
      message: expect.stringContaining('invalid variables'),
    });
    expect(checkDefinition(def({ body: 'Hi {{name}.' }))[0]).toMatchObject({
      path: 'body',
      message: expect.stringContaining('unbalanced'),
    });
    expect(
      checkDefinition(
        def({
          examples: [
            { name: 'first_name', text: 'A' },
            { name: 'first_name', text: 'B' },
            { name: 'zip', text: 'z' },
          ],
        }),
      ),
    ).toEqual([
      { path: 'examples.1.name', message: 'has an example already' },
      { path: 'examples.2.name', message: expect.stringContaining('is not a variable') },
      { path: 'examples', message: expect.stringContaining('{{eta}}') },
    ]);
  });

  it('builds the provider payload with named or ordered positional examples', () => {
    expect(createPayload(def({})).components).toEqual([
      {
        type: 'BODY',
        text: 'Hi {{first_name}}, ships {{eta}}.',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Ann' },
            { param_name: 'eta', example: 'Friday' },
          ],
        },
      },
    ]);
    const positional = createPayload(
      def({
        parameterFormat: 'POSITIONAL',
        body: 'A {{2}} B {{1}}.',
        examples: [
          { name: '2', text: 'two' },
          { name: '1', text: 'one' },
        ],
      }),
    );
    expect(positional).toMatchObject({
      parameter_format: 'POSITIONAL',
      components: [{ example: { body_text: [['one', 'two']] } }],
    });
  });
});

describe('the Template shape', () => {
  it('maps provider fields, counts distinct body variables, hides NONE and converts quality dates', () => {
    const t = toTemplate({
      id: '123',
      name: 'x',
      language: 'en',
      category: 'MARKETING',
      status: 'APPROVED',
      rejected_reason: 'NONE',
      components: [
        { type: 'HEADER', text: '{{9}}' },
        { type: 'BODY', text: '{{1}} {{2}} {{1}}' },
      ],
      quality_score: { score: 'GREEN', date: 1750000000 },
    });
    expect(t).toMatchObject({
      id: '123',
      parameterFormat: 'POSITIONAL',
      parameterCount: 2,
      rejectedReason: null,
      qualityScore: { score: 'GREEN', date: '2025-06-15T15:06:40.000Z' },
    });
    expect(
      toTemplate({ id: 1, components: [{ type: 'BODY', text: 'a {{who}}' }], rejected_reason: 'INVALID_FORMAT' }),
    ).toMatchObject({ id: '1', parameterFormat: 'NAMED', rejectedReason: 'INVALID_FORMAT' });
    expect(toTemplate({ id: '1' })).not.toHaveProperty('qualityScore');
  });
});

describe('template cursors', () => {
  const account = '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f';
  it('wrap the provider cursor for one account only', () => {
    expect(unwrapCursor(account, wrapCursor(account, 'QVFIUabc'))).toBe('QVFIUabc');
    expect(() => unwrapCursor('00000000-0000-4000-8000-000000000000', wrapCursor(account, 'QVFIUabc'))).toThrow(
      'invalid_cursor',
    );
    for (const bad of [
      '',
      'not base64!',
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('{').toString('base64url'),
    ])
      expect(() => unwrapCursor(account, bad)).toThrow('invalid_cursor');
  });
  it('are null unless the provider gives paging.next', () => {
    expect(nextCursorOf(account, { cursors: { after: 'A' } })).toBeNull();
    expect(nextCursorOf(account, undefined)).toBeNull();
    expect(nextCursorOf(account, { cursors: { after: 'A' }, next: 'https://x' })).toBe(wrapCursor(account, 'A'));
  });
});

describe('provider errors of template calls', () => {
  const fail = (
    o: Partial<Extract<ManagementOutcome, { ok: false }>> & { code?: number; subcode?: number; message?: string },
  ) => ({
    ok: false as const,
    transport: o.transport ?? null,
    httpStatus: o.httpStatus ?? 400,
    userTitle: o.userTitle ?? null,
    retryAfter: o.retryAfter ?? null,
    detail:
      o.code === undefined && o.message === undefined
        ? null
        : { code: o.code ?? null, subcode: o.subcode ?? null, message: o.message ?? null, fbtraceId: 'T' },
  });
  const map = (op: 'list' | 'create', o: Parameters<typeof fail>[0]) => {
    const e = toTemplateError(op, fail(o), ['EAAG-secret-management']);
    return { status: e.status, ...e.body(), headers: e.headers } as Record<string, unknown>;
  };
  it('classifies by code first, then HTTP status', () => {
    expect(map('create', { code: 100, subcode: 2388024 })).toMatchObject({
      status: 409,
      error: 'template_already_exists',
    });
    expect(map('create', { code: 100, subcode: 2388299, userTitle: 'Variables at the end' })).toMatchObject({
      status: 422,
      error: 'template_rejected_by_provider',
      message: 'Variables at the end',
    });
    expect(map('list', { code: 100 })).toMatchObject({ status: 422, error: 'template_management_unavailable' });
    for (const code of [4, 80007, 130429])
      expect(map('list', { code })).toMatchObject({
        status: 429,
        error: 'provider_rate_limited',
        headers: { 'retry-after': '60' },
      });
    expect(map('list', { httpStatus: 429, retryAfter: '120' })).toMatchObject({
      status: 429,
      headers: { 'retry-after': '120' },
    });
    expect(map('list', { code: 190, httpStatus: 401 })).toMatchObject({
      status: 422,
      error: 'template_management_unavailable',
      message: expect.stringContaining('rejected'),
    });
    expect(map('create', { code: 10, httpStatus: 403 })).toMatchObject({
      status: 422,
      error: 'template_management_unavailable',
      message: expect.stringContaining('permission'),
    });
    expect(map('create', { httpStatus: 502 })).toMatchObject({ status: 503, error: 'provider_unavailable' });
    expect(map('create', { code: 2, httpStatus: 400 })).toMatchObject({ status: 503, error: 'provider_unavailable' });
    expect(map('list', { transport: 'timeout', httpStatus: null })).toMatchObject({
      status: 503,
      error: 'provider_unreachable',
    });
    expect(map('list', { transport: 'network', httpStatus: null })).toMatchObject({
      status: 503,
      error: 'provider_unreachable',
    });
  });
  it('never echoes a token in the provider detail', () => {
    const e = map('create', {
      code: 100,
      message: 'bad token EAAG-secret-management and EAABsbCS1iHgBAAZB1234567890',
      userTitle: 'EAAG-secret-management',
    });
    expect(JSON.stringify(e)).not.toContain('EAAG-secret-management');
    expect(JSON.stringify(e)).not.toContain('EAABsbCS1iHgBAAZB1234567890');
    expect(e.provider).toEqual({
      httpStatus: 400,
      code: 100,
      subcode: null,
      message: 'bad token [redacted] and [redacted]',
      userTitle: '[redacted]',
      fbtraceId: 'T',
    });
  });
});
