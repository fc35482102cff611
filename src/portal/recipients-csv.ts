// Broadcast recipients from pasted text or an uploaded CSV: one row per recipient, the phone in
// the first column, an optional externalId in the second, and the row's own template values in the
// columns after it (empty cells dropped from the end); a header row is skipped.
import { parse } from 'csv-parse/sync';

/** `raw` is the phone cell as written; `phoneE164` drops spaces, dots, dashes and brackets. */
export type RecipientRow = { line: number; raw: string; phoneE164: string; externalId?: string; values?: string[] };

export function parseRecipients(text: string): RecipientRow[] {
  const records = parse(text, {
    relax_column_count: true,
    skip_empty_lines: true,
    trim: true,
    bom: true,
    info: true,
  }) as unknown as { record: string[]; info: { lines: number } }[];
  const rows: RecipientRow[] = [];
  records.forEach(({ record, info }, i) => {
    const [phone = '', externalId = '', ...rest] = record;
    while (rest.length > 0 && rest.at(-1) === '') rest.pop();
    if (i === 0 && !/^[+\d(]/.test(phone)) return; // a header such as "phone,externalId"
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
