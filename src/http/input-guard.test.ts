import { describe, expect, it } from 'vitest';

import { findInputProblem, MAX_JSON_DEPTH } from './input-guard.js';

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
