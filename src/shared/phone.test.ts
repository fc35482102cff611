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

  it.each([
    // Valid international digits are that number, even when they are a valid national number too.
    ['4915112345678', 'DE', '+4915112345678'],
    ['3612345678', 'US', '+3612345678'],
    // Not valid internationally, valid nationally: national.
    ['15112345678', 'DE', '+4915112345678'],
    ['2079460958', 'GB', '+442079460958'],
    ['612345678', 'FR', '+33612345678'],
    // The national reading with its trunk prefix is never a valid international number.
    ['13612345678', 'US', '+13612345678'],
    ['06 12 34 56 78', 'FR', '+33612345678'],
    // Neither reading valid: a possible international number, as written.
    ['15551230000', 'US', '+15551230000'],
    // With + or 00 it is international whatever the default country, and taken when possible.
    ['+15551230000', 'DE', '+15551230000'],
    ['004915112345678', 'US', '+4915112345678'],
  ])('bare digits %s (default %s) → %s', (input, country, expected) => {
    expect(normalizePhone(input, country)).toBe(expected);
  });

  it.each([
    ['+4915112345678', 'DE', '0151 12345678'],
    ['+16505551234', 'US', '(650) 555-1234'],
    ['+442079460958', 'GB', '020 7946 0958'],
    ['+3612345678', 'HU', '06 1 234 5678'],
    ['+33612345678', 'FR', '06 12 34 56 78'],
  ])('every spelling of %s (default %s) is that number', (e164, country, national) => {
    const digits = e164.slice(1);
    for (const spelling of [e164, digits, `00${digits}`, national]) {
      expect(normalizePhone(spelling, country), spelling).toBe(e164);
    }
  });

  it.each(['', 'abc', '+', '12', '+1-800-FLOWERS', '+99999999999999999999', '+0301234567'])(
    'refuses %s without a country',
    (input) => {
      expect(normalizePhone(input, null)).toBeNull();
    },
  );
});
