import { describe, expect, it } from 'vitest';

import { normalizePhone } from './phone.js';

describe('normalizePhone', () => {
  it.each([
    ['+16505551234', 'US', '+16505551234'],
    ['+1 (650) 555-1234', null, '+16505551234'],
    ['0016505551234', null, '+16505551234'],
    ['16505551234', null, '+16505551234'],
    ['6505551234', 'US', '+16505551234'],
    ['030 1234567', 'DE', '+49301234567'],
    ['+49 30 1234567', 'US', '+49301234567'],
    ['447700900123', 'US', '+447700900123'],
  ])('%s (default %s) → %s', (input, country, expected) => {
    expect(normalizePhone(input, country)).toBe(expected);
  });
  it.each(['', 'abc', '+', '12', '+1-800-FLOWERS', '+99999999999999999999'])(
    'refuses %s without a country',
    (input) => {
      expect(normalizePhone(input, null)).toBeNull();
    },
  );
});
