// Broadcast recipients from pasted text or an uploaded CSV: one row per recipient, the phone in
// the first column, an optional externalId in the second, and the row's own template values in the
// columns after it (empty cells dropped from the end); a header row is skipped. A header that names
// a phone column elsewhere ("Recipient", as the portal's messages export has it) is followed: that
// column is the phone, an "External id" column the reference, and the rows carry no values; so an
// export of messages is imported again as it was downloaded (decision 0066). The portal's column
// mapping step (decision 0074) names each column's role instead: the phone, the reference, a
// template value (in column order) or nothing.
import { parse } from 'csv-parse/sync';

/** `raw` is the phone cell as written; `phoneE164` drops spaces, dots, dashes and brackets. */
export type RecipientRow = { line: number; raw: string; phoneE164: string; externalId?: string; values?: string[] };

const PHONE_HEADER = /^(recipient|phone|phone ?number|phonee164|number)$/i;
const REFERENCE_HEADER = /^(external ?id|reference)$/i;

/** The columns a header row names, when its phone column is not the first one. */
function mappedColumns(header: string[]): { phone: number; externalId: number } | null {
  const phone = header.findIndex((h) => PHONE_HEADER.test(h.trim()));
  if (phone <= 0) return null;
  return { phone, externalId: header.findIndex((h) => REFERENCE_HEADER.test(h.trim())) };
}

/** What a column of the file is: the phone, the externalId, the next template value, or left out. */
export const COLUMN_ROLES = ['phone', 'externalId', 'value', 'ignore'] as const;
export type ColumnRole = (typeof COLUMN_ROLES)[number];

type Record_ = { record: string[]; info: { lines: number } };

function records(text: string): Record_[] {
  return parse(text, {
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
    bom: true,
    info: true,
  }) as unknown as Record_[];
}

/** A first row that is a header: its first cell is not a number's start. */
const isHeader = (record: string[]) => !/^[+\d(]/.test(record[0] ?? '');

/** The roles the file's columns get without a mapping (the default reading described above). */
function defaultRoles(first: string[], width: number): ColumnRole[] {
  const m = isHeader(first) ? mappedColumns(first) : null;
  return Array.from({ length: width }, (_x, i): ColumnRole => {
    if (m) return i === m.phone ? 'phone' : i === m.externalId ? 'externalId' : 'ignore';
    return i === 0 ? 'phone' : i === 1 ? 'externalId' : 'value';
  });
}

/**
 * The file's columns for the mapping step: each one's name (the header's, else "Column n"), the
 * first recipient's value in it, and its role without a mapping.
 */
export function csvColumns(text: string): { name: string; sample: string; role: ColumnRole }[] {
  const all = records(text);
  const first = all[0]?.record ?? [];
  const header = all.length > 0 && isHeader(first);
  const sampleRow = (header ? all[1] : all[0])?.record ?? [];
  const width = Math.max(0, ...all.slice(0, 50).map((r) => r.record.length));
  const roles = defaultRoles(first, width);
  return roles.map((role, i) => ({
    name: header && first[i] ? first[i] : `Column ${i + 1}`,
    sample: sampleRow[i] ?? '',
    role,
  }));
}

/**
 * The recipients of `text`; `roles` (the mapping step's, one per column) names each column's
 * role, else the default reading. A header row is skipped either way.
 */
export function parseRecipients(text: string, roles?: readonly ColumnRole[]): RecipientRow[] {
  const all = records(text);
  if (all.length === 0) return [];
  const first = all[0]!.record;
  const header = isHeader(first);
  const width = Math.max(...all.slice(0, 50).map((r) => r.record.length));
  const r = roles ?? defaultRoles(first, width);
  if (roles && !roles.includes('phone')) throw new Error('no column is mapped to the phone number');
  const phoneAt = r.indexOf('phone');
  const referenceAt = r.indexOf('externalId');
  const valuesAt = r.flatMap((role, i) => (role === 'value' ? [i] : []));
  return all.slice(header ? 1 : 0).map(({ record, info }) => {
    const phone = record[phoneAt] ?? '';
    const externalId = referenceAt >= 0 ? (record[referenceAt] ?? '') : '';
    // Values: the value columns in order, then (without a mapping) any cell past the header's width.
    const rest = valuesAt.map((i) => record[i] ?? '');
    if (!roles && valuesAt.length > 0) rest.push(...record.slice(r.length));
    while (rest.length > 0 && rest.at(-1) === '') rest.pop();
    return {
      line: info.lines,
      raw: phone,
      phoneE164: phone.replace(/[\s().-]/g, ''),
      ...(externalId ? { externalId } : {}),
      ...(rest.length > 0 ? { values: rest } : {}),
    };
  });
}
