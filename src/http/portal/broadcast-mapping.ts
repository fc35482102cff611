// The broadcast form's column mapping step and its preview of the first recipients (issue #37,
// decision 0074). After "Check recipients", each column of the recipients (a CSV file's or the
// pasted lines') is listed with its name, the first recipient's value and its role (the phone,
// the externalId, the next template value, or left out), pre-set as the file would be read
// without a mapping; changing a role and checking again reads the file that way. The selects
// belong to the compose form (`form="compose"`), so the check posts them with the recipients.
import { COLUMN_ROLES, type ColumnRole, csvColumns } from '../../portal/recipients-csv.js';
import { str } from './deps.js';
import { type Html, html, type Part } from './html.js';
import { dataTable } from './tables.js';

const ROLE_WORDS: Record<ColumnRole, string> = {
  phone: 'Phone number',
  externalId: 'External id',
  value: 'Template value (in column order)',
  ignore: 'Not used',
};

/** The most columns the step lists (a file with more is read without a mapping past them). */
const MAX_COLUMNS = 30;
/** How many recipients the preview shows. */
export const PREVIEW_RECIPIENTS = 5;

export type Columns = ReturnType<typeof csvColumns>;

/** The file's columns, or none when it cannot be read (the check says why). */
export function columnsOf(text: string): Columns {
  try {
    return csvColumns(text).slice(0, MAX_COLUMNS);
  } catch {
    return [];
  }
}

/** The roles the form's mapping sets (`col0`, `col1`, …), when it names one for every column; else none. */
export function rolesOf(body: unknown, columns: Columns): ColumnRole[] | undefined {
  if (columns.length === 0) return undefined;
  const roles = columns.map((_c, i) => str(body, `col${i}`));
  if (!roles.every((r): r is ColumnRole => (COLUMN_ROLES as readonly string[]).includes(r))) return undefined;
  return roles;
}

/** The mapping step: one select per column, in the compose form. */
export function mappingStep(columns: Columns, roles: readonly ColumnRole[] | undefined): Part {
  if (columns.length === 0) return '';
  return html`<section aria-labelledby="mapping-h">
    <h2 id="mapping-h">Columns</h2>
    <p>What each column holds. Change a column and check the recipients again to read the file that way.</p>
    ${dataTable(
      'The columns of the recipients',
      ['Column', 'First recipient', 'Holds'],
      columns.map((c, i) => {
        const role = roles?.[i] ?? c.role;
        return html`<tr>
          <th scope="row">${c.name}</th>
          <td>${c.sample}</td>
          <td>
            <select form="compose" name="col${i}" aria-label="What the column ${c.name} holds">
              ${COLUMN_ROLES.map(
                (r) => html`<option value="${r}" ${r === role ? html`selected` : ''}>${ROLE_WORDS[r]}</option>`,
              )}
            </select>
          </td>
        </tr>`;
      }),
    )}
  </section>`;
}

type Recipient = { phoneE164: string; externalId?: string; components?: { body?: string[] } };

/** The first recipients that will be sent, as the API will get them. */
export function firstRecipients(good: readonly Recipient[]): Html | string {
  if (good.length === 0) return '';
  return html`<section aria-labelledby="first-h">
    <h2 id="first-h">The first recipients</h2>
    ${dataTable(
      `The first ${Math.min(PREVIEW_RECIPIENTS, good.length)} of ${good.length} recipient(s) to be sent`,
      ['Phone number', 'External id', 'Template values'],
      good.slice(0, PREVIEW_RECIPIENTS).map(
        (r) =>
          html`<tr class="first-recipient">
            <td>${r.phoneE164}</td>
            <td>${r.externalId ?? '—'}</td>
            <td>${r.components?.body?.join(' | ') || '—'}</td>
          </tr>`,
      ),
    )}
  </section>`;
}
