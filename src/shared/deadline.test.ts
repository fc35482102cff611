import { describe, expect, it } from 'vitest';

import { deadline } from './deadline.js';

describe('deadline', () => {
  it('aborts with a TimeoutError, as AbortSignal.timeout does', async () => {
    const d = deadline(10);
    await new Promise<void>((resolve) => d.signal.addEventListener('abort', () => resolve()));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never aborts once cleared', async () => {
    const d = deadline(10);
    d.clear();
    await new Promise((r) => setTimeout(r, 50));
    expect(d.signal.aborted).toBe(false);
  });
});
