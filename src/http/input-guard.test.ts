import { describe, expect, it } from 'vitest';

import { dropUnstorableItems, findInputProblem, MAX_JSON_DEPTH } from './input-guard.js';

describe('findInputProblem', () => {
  it('names the path of a bad value, a bad key and an array item', () => {
    expect(findInputProblem({ a: { b: 'x\u0000' } }, '')?.path).toBe('a.b');
    expect(findInputProblem({ a: [{ ok: 1 }, { c: '\ud800' }] }, '')?.path).toBe('a.1.c');
    expect(findInputProblem({ a: { 'k\u0000': 1 } }, '')).toEqual({
      path: 'a',
      message: 'has a key with NUL characters or unpaired surrogates',
    });
    expect(findInputProblem({ p: 'x\u0000' }, 'params')?.path).toBe('params.p');
    expect(findInputProblem('\udc00', '')).toEqual({
      path: '',
      message: 'must not contain NUL characters or unpaired surrogates',
    });
  });

  it('accepts clean values, paired surrogates and null-prototype objects (parsed queries)', () => {
    const query = Object.assign(Object.create(null) as Record<string, unknown>, { q: 'a😀', n: ['1', '2'] });
    expect(findInputProblem(query, '')).toBeNull();
    expect(findInputProblem({ a: [1, true, null, { b: 'ok' }] }, '')).toBeNull();
    expect(findInputProblem(null, '')).toBeNull();
  });

  it('refuses nesting deeper than the limit, naming where it goes too deep', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH + 1; i++) deep = { d: deep };
    const problem = findInputProblem(deep, '');
    expect(problem?.message).toBe(`is nested more than ${MAX_JSON_DEPTH} levels deep`);
    expect(problem?.path).toBe(Array(MAX_JSON_DEPTH).fill('d').join('.'));
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH; i++) ok = { d: ok };
    expect(findInputProblem(ok, '')).toBeNull();
  });
});

describe('dropUnstorableItems', () => {
  const webhook = (pn: string, statuses: unknown[]) => ({
    object: 'whatsapp_business_account',
    entry: [{ id: 'w', changes: [{ field: 'messages', value: { metadata: { phone_number_id: pn }, statuses } }] }],
  });

  it('takes out the nearest array element holding bad text, keeping the rest', () => {
    const payload = webhook('pn1', [{ id: 'a', status: 'read' }, { id: 'b\u0000' }, { id: 'c', x: { 'k\ud800': 1 } }]);
    const { kept, dropped } = dropUnstorableItems(payload);
    expect(dropped.sort()).toEqual(['entry.0.changes.0.value.statuses.1', 'entry.0.changes.0.value.statuses.2']);
    expect(kept).toEqual(webhook('pn1', [{ id: 'a', status: 'read' }]));
  });

  it('drops the whole change when the phone-number id is a run of NUL characters', () => {
    const payload = webhook('\u0000'.repeat(10_000), [{ id: 'a', status: 'read' }]);
    const good = webhook('pn2', [{ id: 'b', status: 'read' }]).entry[0]!.changes[0]!;
    payload.entry[0]!.changes.push(good);
    const { kept, dropped } = dropUnstorableItems(payload);
    expect(dropped).toEqual(['entry.0.changes.0']);
    expect((kept as typeof payload).entry[0]!.changes).toEqual([good]);
  });

  it('keeps nothing when bad text sits outside every array, and leaves a clean payload as it is', () => {
    expect(dropUnstorableItems({ object: 'w\u0000', entry: [] })).toEqual({ kept: null, dropped: ['object'] });
    expect(dropUnstorableItems({ ['\udc00']: 1 })).toEqual({ kept: null, dropped: [''] });
    expect(dropUnstorableItems('\u0000').kept).toBeNull();
    const clean = webhook('pn3', [{ id: 'a😀' }]);
    expect(dropUnstorableItems(structuredClone(clean))).toEqual({ kept: clean, dropped: [] });
  });

  it('walks a deep payload without overflowing the stack', () => {
    let deep: unknown = ['\u0000'];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const { kept, dropped } = dropUnstorableItems({ entry: deep });
    expect(dropped).toHaveLength(1);
    expect(kept).toBeTypeOf('object');
  });
});

describe('findInputProblem and files', () => {
  it("does not read a Buffer's bytes as text", () => {
    expect(findInputProblem({ csv: Buffer.from([0, 0xd8]), name: 'ok' }, '')).toBeNull();
  });
});
