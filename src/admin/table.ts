// Plain-text tables for `chatgate admin` (people read these; scripts use --json).

export type Column<R> = { title: string; value: (row: R) => unknown };

const cell = (v: unknown): string => {
  if (v === null || v === undefined || v === '') return '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v).replace(/[\r\n\t]+/g, ' ');
};

/** Columns padded to their widest cell, a header line, and one line per row. */
export function renderTable<R>(columns: Column<R>[], rows: R[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((line) => line[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.title)), ...cells.map(line)].join('\n');
}

/** One record as "field  value" lines. */
export function renderRecord(fields: [string, unknown][]): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join('\n');
}
