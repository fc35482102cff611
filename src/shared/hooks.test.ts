import { describe, expect, it } from 'vitest';

import { createHooks } from './hooks.js';

type Events = { sent: { count: number }; lost: { id: string } };

describe('createHooks', () => {
  it('calls the listeners of an event in subscription order, and only while subscribed', () => {
    const hooks = createHooks<Events>();
    const seen: string[] = [];
    const off = hooks.on('sent', (e) => seen.push(`a${e.count}`));
    hooks.on('sent', (e) => seen.push(`b${e.count}`));
    hooks.on('lost', (e) => seen.push(`lost ${e.id}`));
    hooks.emit('sent', { count: 1 });
    off();
    hooks.emit('sent', { count: 2 });
    expect(seen).toEqual(['a1', 'b1', 'b2']);
  });

  it('an event nobody listens to is a no-op', () => {
    expect(() => createHooks<Events>().emit('lost', { id: 'x' })).not.toThrow();
  });

  it('a listener that throws is reported and does not stop the others', () => {
    const errors: [unknown, string][] = [];
    const hooks = createHooks<Events>((err, name) => errors.push([err, String(name)]));
    const seen: number[] = [];
    hooks.on('sent', () => {
      throw new Error('observer broke');
    });
    hooks.on('sent', (e) => seen.push(e.count));
    hooks.emit('sent', { count: 3 });
    expect(seen).toEqual([3]);
    expect(errors.map(([e, n]) => [(e as Error).message, n])).toEqual([['observer broke', 'sent']]);
  });
});
