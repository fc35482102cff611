import { describe, expect, it } from 'vitest';

import { loadConfig } from '../config.js';
import { blockedMarketOf, parseMarkets } from './markets.js';

describe('marketing blocked markets', () => {
  it('defaults to no market (the operator opts in, e.g. US); none empties it; bad entries are named', () => {
    expect(loadConfig({}).marketingBlockedMarkets).toEqual([]);
    expect(loadConfig({ MARKETING_BLOCKED_MARKETS: 'none' }).marketingBlockedMarkets).toEqual([]);
    expect(loadConfig({ MARKETING_BLOCKED_MARKETS: 'US, +44' }).marketingBlockedMarkets).toEqual(['US', '+44']);
    expect(parseMarkets('US,XX,+0,44').problem).toBe('not an ISO 3166 region (US) or a calling code (+44): XX, +0, 44');
    expect(() => loadConfig({ MARKETING_BLOCKED_MARKETS: 'usa' })).toThrow(/MARKETING_BLOCKED_MARKETS/);
  });

  it('matches a region by the number metadata and a calling code by prefix', () => {
    expect(blockedMarketOf('+12025550123', ['US'])).toBe('US');
    expect(blockedMarketOf('+14165550123', ['US'])).toBeNull(); // Canada shares +1
    expect(blockedMarketOf('+14165550123', ['+1'])).toBe('+1');
    expect(blockedMarketOf('+447700900123', ['US', '+44'])).toBe('+44');
    expect(blockedMarketOf('+12025550123', [])).toBeNull();
  });
});
