// Broadcast recipients from CSV: the phone first (a header skipped), or the column a header names.
import { describe, expect, it } from 'vitest';

import { csvColumns, parseRecipients } from './recipients-csv.js';

describe('parseRecipients', () => {
  it('reads phone, reference and values in that order, skipping a header', () => {
    expect(parseRecipients('phone,externalId,name\n+15551230001,a-1,Ana\n+1 (555) 123-0002\n')).toEqual([
      { line: 2, raw: '+15551230001', phoneE164: '+15551230001', externalId: 'a-1', values: ['Ana'] },
      { line: 3, raw: '+1 (555) 123-0002', phoneE164: '+15551230002' },
    ]);
  });

  it('follows a header that names the phone column elsewhere, as the messages export does (issue #37)', () => {
    const csv = '\uFEFFCreated,External id,Recipient,Account\r\n2026-11-29T10:00:00.000Z,x-1,+15551230003,Main\r\n';
    expect(parseRecipients(csv)).toEqual([
      { line: 2, raw: '+15551230003', phoneE164: '+15551230003', externalId: 'x-1' },
    ]);
  });

  it('reads the columns as the mapping step names them (issue #37)', () => {
    const csv = 'Name,Mobile,Order,City\nAna,+15551230004,o-4,Porto\n';
    expect(csvColumns(csv)).toEqual([
      { name: 'Name', sample: 'Ana', role: 'phone' },
      { name: 'Mobile', sample: '+15551230004', role: 'externalId' },
      { name: 'Order', sample: 'o-4', role: 'value' },
      { name: 'City', sample: 'Porto', role: 'value' },
    ]);
    expect(parseRecipients(csv, ['value', 'phone', 'externalId', 'value'])).toEqual([
      { line: 2, raw: '+15551230004', phoneE164: '+15551230004', externalId: 'o-4', values: ['Ana', 'Porto'] },
    ]);
    expect(() => parseRecipients(csv, ['ignore', 'ignore', 'value', 'value'])).toThrow(/no column/);
  });
});
