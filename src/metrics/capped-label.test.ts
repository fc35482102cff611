import { describe, expect, it } from 'vitest';

import { cappedLabel, OVERFLOW_LABEL } from './capped-label.js';

describe('cappedLabel', () => {
  it('keeps the first ids and folds later ones into one value', () => {
    const label = cappedLabel(2);
    expect(label('a')).toBe('a');
    expect(label('b')).toBe('b');
    expect(label('c')).toBe(OVERFLOW_LABEL);
    expect(label('a')).toBe('a');
  });
});
