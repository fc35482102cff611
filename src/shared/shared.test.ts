import crypto from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { canonicalJson, createSealer, keyIdOf, safeEqual } from './crypto.js';
import { decodeCursor, encodeCursor, type Position } from './cursor.js';
import { createGroupCommit } from './group-commit.js';

describe('canonicalJson', () => {
  it('is independent of key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
      }),
    );
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
  });

  // Stored payload hashes were computed with this first version: any rewrite must give its bytes.
  const firstVersion = (value: unknown): string => {
    if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
    if (Array.isArray(value)) return `[${value.map(firstVersion).join(',')}]`;
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${firstVersion(v)}`).join(',')}}`;
  };
  it('gives the bytes stored hashes were made from', () => {
    const withUndefined = fc.oneof(fc.jsonValue(), fc.constant(undefined));
    fc.assert(
      fc.property(fc.anything({ values: [withUndefined], withObjectString: false }), (value) => {
        expect(canonicalJson(value)).toBe(firstVersion(value));
      }),
      { numRuns: 500 },
    );
    expect(canonicalJson({ 10: 'a', 9: 'b', b: undefined, a: [undefined, 1] })).toBe('{"10":"a","9":"b","a":[null,1]}');
  });
});

describe('sealer', () => {
  const sealer = createSealer(Buffer.alloc(32, 3));
  const at = { table: 't', column: 'c', id: '1' };
  it('round-trips and never shows the plain text', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 4 }), (plain) => {
        const sealed = sealer.seal(plain, at);
        expect(sealed.includes(plain)).toBe(false);
        expect(sealer.open(sealed, at)).toBe(plain);
      }),
    );
  });
  it('refuses tampered or foreign ciphertext', () => {
    const sealed = sealer.seal('token', at);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => sealer.open(parts.join('.'), at)).toThrow();
    expect(() => createSealer(Buffer.alloc(32, 4)).open(sealed, at)).toThrow();
  });
});

describe('sealer: key ids and the place a value is bound to', () => {
  const oldKey = Buffer.alloc(32, 3);
  const newKey = Buffer.alloc(32, 5);
  const at = { table: 'chat_accounts', column: 'access_token_enc', id: 'a1' };
  /** A value in the first format (no key id, no associated data), as stored before key ids. */
  function v1(key: Buffer, plain: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), ct]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  it('names its key and does not open in another row, column or table', () => {
    const sealer = createSealer(newKey);
    const sealed = sealer.seal('EAAG-token', at);
    expect(sealed.startsWith(`v2.${keyIdOf(newKey)}.`)).toBe(true);
    expect(sealer.isCurrent(sealed)).toBe(true);
    expect(sealer.open(sealed, at)).toBe('EAAG-token');
    expect(() => sealer.open(sealed, { ...at, id: 'a2' })).toThrow();
    expect(() => sealer.open(sealed, { ...at, column: 'app_secret_enc' })).toThrow();
    expect(() => sealer.open(sealed, { ...at, table: 'api_keys' })).toThrow();
    // Not even after the right row has opened it (the cache is per place).
    expect(() => sealer.open(sealed, { ...at, id: 'a2' })).toThrow();
  });

  it('opens values of the first format with either key, and values of the previous key while it is configured', () => {
    const rotating = createSealer({ current: newKey, previous: oldKey });
    expect(rotating.previousKeyId).toBe(keyIdOf(oldKey));
    const legacy = v1(oldKey, 'legacy');
    expect(rotating.open(legacy, at)).toBe('legacy');
    expect(rotating.isCurrent(legacy)).toBe(false);
    const underOld = createSealer(oldKey).seal('old', at);
    expect(rotating.open(underOld, at)).toBe('old');
    expect(rotating.isCurrent(underOld)).toBe(false);
    const alone = createSealer(newKey);
    expect(() => alone.open(underOld, at)).toThrow(/ENCRYPTION_KEY/);
    expect(() => alone.open(legacy, at)).toThrow();
  });
});

describe('safeEqual', () => {
  it('compares exactly', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('cursor', () => {
  it('round-trips positions', () => {
    const p = { createdAt: new Date('2026-11-22T01:02:03.456Z'), id: '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f' };
    expect(decodeCursor(encodeCursor(p))).toEqual(p);
  });
  it('rejects anything else with invalid_cursor', () => {
    const outcome = (s: string): { position: Position } | { code: unknown } => {
      try {
        return { position: decodeCursor(s) };
      } catch (err) {
        return { code: (err as { code?: unknown }).code };
      }
    };
    // Whatever a string decodes to, it is either refused with invalid_cursor or a well-formed
    // position (a UUID and a real instant) that round-trips through its own cursor.
    const refusedOrCanonical = (s: string) => {
      const o = outcome(s);
      if ('code' in o) {
        expect(o.code).toBe('invalid_cursor');
        return;
      }
      expect(o.position.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Number.isNaN(o.position.createdAt.getTime())).toBe(false);
      expect(decodeCursor(encodeCursor(o.position))).toEqual(o.position);
    };
    fc.assert(fc.property(fc.string(), refusedOrCanonical));
    // Near misses of real cursors: one character changed, cut short, or extended.
    const valid = encodeCursor({
      createdAt: new Date('2026-11-22T01:02:03.456Z'),
      id: '6f1c2c9e-9d7a-4b7e-8a57-0a3b1c2d3e4f',
    });
    fc.assert(
      fc.property(
        fc.nat({ max: valid.length - 1 }),
        fc.constantFrom(...'ABCxyz019-_=+/.'.split('')),
        fc.nat({ max: valid.length }),
        (at, ch, cut) => {
          refusedOrCanonical(valid.slice(0, at) + ch + valid.slice(at + 1));
          refusedOrCanonical(valid.slice(0, cut));
          refusedOrCanonical(valid + ch);
        },
      ),
    );
    // And refusals that must happen, so that the property above cannot pass by accepting all.
    for (const bad of [
      '',
      'not a cursor',
      valid.slice(0, -4),
      `${valid}!`,
      encodeCursor({ createdAt: new Date(0), id: 'x' } as Position),
    ])
      expect(outcome(bad)).toEqual({ code: 'invalid_cursor' });
  });
});

describe('group commit', () => {
  it('batches what arrives in one turn, then what arrived while a batch was in flight', async () => {
    const batches: number[][] = [];
    const group = createGroupCommit<number, number>(
      async (items) => {
        batches.push(items);
        await new Promise((r) => setTimeout(r, 20));
        return items.map((i) => i * 2);
      },
      { maxBatch: 100, maxInFlight: 1 },
    );
    const first = Array.from({ length: 10 }, (_, i) => group.submit(i));
    await new Promise((r) => setTimeout(r, 5)); // the first batch is now in flight
    const later = Array.from({ length: 5 }, (_, i) => group.submit(100 + i));
    expect(await Promise.all([...first, ...later])).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i * 2),
      200,
      202,
      204,
      206,
      208,
    ]);
    expect(batches).toEqual([Array.from({ length: 10 }, (_, i) => i), [100, 101, 102, 103, 104]]);
  });
  it('never puts more than maxBatch in one batch', async () => {
    const sizes: number[] = [];
    const group = createGroupCommit<number, number>(
      async (items) => {
        sizes.push(items.length);
        return items;
      },
      { maxBatch: 7, maxInFlight: 1 },
    );
    await Promise.all(Array.from({ length: 20 }, (_, i) => group.submit(i)));
    expect(sizes).toEqual([7, 7, 6]);
  });
  it('rejects every caller of a failed batch and carries on', async () => {
    let fail = true;
    const group = createGroupCommit<number, number>(
      async (items) => {
        if (fail) {
          fail = false;
          throw new Error('boom');
        }
        return items;
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    await expect(group.submit(1)).rejects.toThrow('boom');
    await expect(group.submit(2)).resolves.toBe(2);
    await group.drain();
  });
  it('fails a batch that has not settled by its deadline (its callers only), and the next batch goes on', async () => {
    const batches: number[][] = [];
    const group = createGroupCommit<number, number>(
      (items) => {
        batches.push(items);
        // The first batch never settles, as a query left pending by a lost connection.
        return batches.length === 1 ? new Promise<number[]>(() => {}) : Promise.resolve(items);
      },
      { maxBatch: 10, maxInFlight: 1, deadline: { ms: 20, error: () => new Error('deadline') } },
    );
    const stuck = [group.submit(1), group.submit(2)];
    await expect(Promise.all(stuck)).rejects.toThrow('deadline');
    await expect(Promise.allSettled(stuck)).resolves.toEqual([
      { status: 'rejected', reason: new Error('deadline') },
      { status: 'rejected', reason: new Error('deadline') },
    ]);
    await expect(group.submit(3)).resolves.toBe(3);
    expect(batches).toEqual([[1, 2], [3]]);
    await group.drain();
  });
});
