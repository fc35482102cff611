// Markup the list pages share: a data table with a caption and column headings, and the link to
// the next page of a cursor-paged list.
import { type Html, html, type Part } from './html.js';

/** A table of records: a caption, one heading per column, and the rows (`<tr>` each). */
export function dataTable(caption: Part, columns: readonly string[], rows: Part): Html {
  return html`<table>
    <caption>
      ${caption}
    </caption>
    <thead>
      <tr>
        ${columns.map((c) => html`<th scope="col">${c}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

/** The "Next page" link of a cursor-paged list: `params` with the next cursor; nothing on the last page. */
export function nextPageLink(path: string, params: Record<string, string>, nextCursor: string | null): Part {
  if (!nextCursor) return '';
  const next = new URLSearchParams({ ...params, cursor: nextCursor });
  return html`<p><a rel="next" href="${path}?${next.toString()}">Next page</a></p>`;
}
