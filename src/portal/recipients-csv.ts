// Broadcast recipients from pasted text or an uploaded CSV: one row per recipient, the phone in
// the first column, an optional externalId in the second, and the row's own template values in the
// columns after it (empty cells dropped from the end); a header row is skipped. A header that names
// a phone column elsewhere ("Recipient", as the portal's messages export has it) is followed: that
// column is the phone, an "External id" column the reference, and the rows carry no values; so an
// export of messages is imported again as it was downloaded (decision 0066).
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

export function parseRecipients(text: string): RecipientRow[] {
  const records = parse(text, {
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
    bom: true,
    info: true,
  }) as unknown as { record: string[]; info: { lines: number } }[];
  const rows: RecipientRow[] = [];
  let mapped: ReturnType<typeof mappedColumns> = null;
  records.forEach(({ record, info }, i) => {
    if (i === 0 && !/^[+\d(]/.test(record[0] ?? '')) {
      mapped = mappedColumns(record);
      return; // a header such as "phone,externalId"
    }
    const m = mapped as ReturnType<typeof mappedColumns>;
    const [phone = '', externalId = '', ...rest] = m
      ? [record[m.phone] ?? '', m.externalId >= 0 ? (record[m.externalId] ?? '') : '']
      : record;
    while (rest.length > 0 && rest.at(-1) === '') rest.pop();
    rows.push({
      line: info.lines,
      raw: phone,
      phoneE164: phone.replace(/[\s().-]/g, ''),
      ...(externalId ? { externalId } : {}),
      ...(rest.length > 0 ? { values: rest } : {}),
    });
  });
  return rows;
}
