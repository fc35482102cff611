import { describe, expect, it } from 'vitest';

import { DEFAULT_OPT_OUT_KEYWORDS, matchOptOutKeyword } from './opt-out-keywords.js';

describe('matchOptOutKeyword', () => {
  it('matches a whole keyword in any casing, with surrounding whitespace', () => {
    for (const text of ['STOP', 'stop', 'Stop', '  sToP \n', '\tunsubscribe ', 'Arret', 'baja'])
      expect(matchOptOutKeyword(text, DEFAULT_OPT_OUT_KEYWORDS)).not.toBeNull();
  });
  it('never matches a keyword inside longer text, nor an empty text', () => {
    for (const text of ['please stop', 'STOP it', 'stopped', 'S T O P', '', '   ', null])
      expect(matchOptOutKeyword(text, DEFAULT_OPT_OUT_KEYWORDS)).toBeNull();
  });
  it("uses the account's own list when it has one", () => {
    expect(matchOptOutKeyword('stop', ['CANCEL'])).toBeNull();
    expect(matchOptOutKeyword(' cancel ', ['CANCEL'])).toBe('CANCEL');
  });
});
