import { describe, expect, it } from 'vitest';

import { createFairSlots } from './fair-slots.js';

const settled = async <T>(p: Promise<T>) => {
  let state = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((r) => setTimeout(r, 0));
  return state;
};

describe('fair slots', () => {
  it('keeps room for other keys when one key holds its share', async () => {
    const slots = createFairSlots({ total: 4, perKey: 2 });
    await slots.acquire('a');
    await slots.acquire('a');
    const thirdA = slots.acquire('a');
    expect(await settled(thirdA)).toBe('pending');
    const b1 = await slots.acquire('b');
    const b2 = await slots.acquire('b');
    expect(await settled(slots.acquire('c'))).toBe('pending');
    b1();
    b1(); // a second release changes nothing
    expect(slots.usage()).toEqual({ held: 4, waiting: 1 }); // c took b1's place; a still waits
    b2();
    expect(await settled(thirdA)).toBe('pending'); // a is at its share: b2's place stays free
    expect(slots.usage()).toEqual({ held: 3, waiting: 1 });
  });

  it('serves waiters in arrival order among those with room, and forgets aborted ones', async () => {
    const slots = createFairSlots({ total: 1, perKey: 1 });
    const first = await slots.acquire('a');
    const ac = new AbortController();
    const gone = slots.acquire('b', ac.signal);
    const next = slots.acquire('c');
    ac.abort(new Error('client left'));
    await expect(gone).rejects.toThrow('client left');
    first();
    expect(await settled(next)).toBe('resolved');
    expect(slots.usage()).toEqual({ held: 1, waiting: 0 });
    await expect(slots.acquire('d', AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
