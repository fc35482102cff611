import { describe, expect, it } from 'vitest';

import { renderRecord, renderTable } from './table.js';

describe('admin tables', () => {
  it('pads columns to the widest cell and shows empty values as a dash', () => {
    const out = renderTable(
      [
        { title: 'ID', value: (r: { id: string; name: string | null; on: boolean }) => r.id },
        { title: 'NAME', value: (r) => r.name },
        { title: 'ON', value: (r) => r.on },
      ],
      [
        { id: 'a', name: 'Long name\nsecond line', on: true },
        { id: 'bbbb', name: null, on: false },
      ],
    );
    expect(out.split('\n')).toEqual([
      'ID    NAME                   ON',
      'a     Long name second line  yes',
      'bbbb  -                      no',
    ]);
  });

  it('prints only the header for no rows, and records as aligned fields', () => {
    expect(renderTable([{ title: 'ID', value: (r: { id: string }) => r.id }], [])).toBe('ID');
    expect(
      renderRecord([
        ['id', 'x'],
        ['remaining', 3],
      ]),
    ).toBe('id         x\nremaining  3');
  });
});
