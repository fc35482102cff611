// One CSV field of the messages export: RFC 4180 quoting, and formula starts neutralised.
import { describe, expect, it } from 'vitest';

import { csvCell } from './messages-csv.js';

describe('csvCell', () => {
  it('prefixes what a spreadsheet would read as a formula with an apostrophe', () => {
    for (const s of ['=1+2', '+1555+0099', '+SUM(A1)', '+15551230099=1', '-2+3', '@SUM(A1)', '\t=1', '\r=1'])
      expect(csvCell(s).replace(/^"|"$/g, '')).toBe(`'${s}`);
    expect(csvCell('a=1')).toBe('a=1');
  });

  it('leaves a phone number in international form as it is, so the export can be imported again (issue #37)', () => {
    expect(csvCell('+15551230099')).toBe('+15551230099');
    expect(csvCell('+4915112345678')).toBe('+4915112345678');
  });

  it('quotes a field holding a quote, comma or line break, doubling quotes; null is empty', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('=HYPERLINK("x","y")')).toBe(`"'=HYPERLINK(""x"",""y"")"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(3)).toBe('3');
  });
});
