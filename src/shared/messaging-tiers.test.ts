import { describe, expect, it } from 'vitest';

import { alertLevelOf, limitOfTier, tierOfLimit } from './messaging-tiers.js';

describe('messaging tiers', () => {
  it('reads tier names and numbers as the provider writes them', () => {
    expect(limitOfTier('TIER_2K')).toBe(2000);
    expect(limitOfTier('tier_100k')).toBe(100_000);
    expect(limitOfTier('TIER_UNLIMITED')).toBeNull();
    expect(limitOfTier(-1)).toBeNull();
    expect(limitOfTier(10000)).toBe(10_000);
    expect(limitOfTier('250')).toBe(250);
    expect(limitOfTier('TIER_NOT_SET')).toBeUndefined();
    expect(limitOfTier(0)).toBeUndefined();
    expect(limitOfTier(null)).toBeUndefined();
  });

  it('names limits and alert levels', () => {
    expect(tierOfLimit(2000)).toBe('TIER_2K');
    expect(tierOfLimit(null)).toBe('TIER_UNLIMITED');
    expect(tierOfLimit(7)).toBeNull();
    expect(alertLevelOf(3, 5)).toBe(0);
    expect(alertLevelOf(4, 5)).toBe(80);
    expect(alertLevelOf(5, 5)).toBe(100);
    expect(alertLevelOf(1_000_000, null)).toBe(0);
  });
});
