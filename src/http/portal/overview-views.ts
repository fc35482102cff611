// The overview's message sections (decision 0049): messages by status over the last 14 days
// (bars, then the numbers by day) and each account's figures over the same days. Every number
// links to the messages list filtered to what it counts (status, account, period, and the error
// code RECIPIENT_OPTED_OUT for suppressed; `cancelled` is its own status there, and `failed` there
// leaves the cancelled out, as here).
import type { Tenant } from '../../auth/directory.js';
import type { AccountFigures, ShownStatus } from '../../portal/overview-store.js';
import { SHOWN_STATUSES } from '../../portal/overview-store.js';
import { SEND_ERROR_CODES } from '../../shared/vocab.js';
import { statusBars } from './charts.js';
import { number } from './format.js';
import { html, type Part } from './html.js';

type StatusByDay = { since: Date; byDay: { day: string; counts: Record<ShownStatus, number> }[] };

/** The messages page with these filters (the names messages-views.ts reads). */
export function messagesHref(filters: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  return `/portal/messages?${q.toString()}`;
}

/** The period's bounds as the messages page's date fields take them (UTC, no zone). */
const periodStart = (since: Date) => `${since.toISOString().slice(0, 10)}T00:00`;
const dayBounds = (day: string) => ({ since: `${day}T00:00`, until: `${day}T23:59:59.999` });

/** A count, linked to its list when there is anything to list. */
function countLink(n: number, href: string, label: string): Part {
  return n === 0 ? '0' : html`<a href="${href}" aria-label="${label}">${number(n)}</a>`;
}

export function statusSection({ since, byDay }: StatusByDay) {
  const totals = SHOWN_STATUSES.map((s) => ({ status: s, n: byDay.reduce((sum, d) => sum + d.counts[s], 0) }));
  const from = periodStart(since);
  return html`<section aria-labelledby="status-h">
    <h2 id="status-h">Messages by status, last 14 days</h2>
    ${statusBars(totals)}
    <table class="status-totals">
      <caption>
        Messages created in the last 14 days (UTC, from ${from.slice(0, 10)}) by their status now
      </caption>
      <tbody>
        ${totals.map(
          (t) =>
            html`<tr>
              <th scope="row">${t.status}</th>
              <td data-status="${t.status}">
                ${countLink(t.n, messagesHref({ status: t.status, since: from }), `${t.status}: ${t.n} messages, last 14 days`)}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    <details class="chart-data">
      <summary>By day</summary>
      <table class="status-by-day">
        <caption>
          Messages created per day (UTC) and their status now
        </caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            ${SHOWN_STATUSES.map((s) => html`<th scope="col">${s}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${byDay.map(
            (d) =>
              html`<tr>
                <th scope="row">${d.day}</th>
                ${SHOWN_STATUSES.map(
                  (s) =>
                    html`<td>
                      ${countLink(d.counts[s], messagesHref({ status: s, ...dayBounds(d.day) }), `${s} on ${d.day}: ${d.counts[s]}`)}
                    </td>`,
                )}
              </tr>`,
          )}
        </tbody>
      </table>
    </details>
  </section>`;
}

/** Each account with its status and its figures over the period, every figure a link to its messages. */
export function accountsSection(tenant: Tenant, figures: Map<string, AccountFigures>, since: Date) {
  const from = periodStart(since);
  const cell = (accountId: string, name: string, n: number, status: ShownStatus, what: string, errorCode?: string) =>
    html`<td data-figure="${what}">
      ${countLink(n, messagesHref({ chatAccountId: accountId, status, errorCode, since: from }), `${name}: ${n} ${what}`)}
    </td>`;
  return html`<section aria-labelledby="acc-h">
    <h2 id="acc-h">Accounts</h2>
    <table class="account-figures">
      <caption>
        Each account's messages created in the last 14 days, each counted once in its latest status: sent with no
        receipt yet, delivered, read, failed (of them suppressed: the number is on the account's suppression list), and
        cancelled
      </caption>
      <thead>
        <tr>
          <th scope="col">Account</th>
          <th scope="col">Status</th>
          <th scope="col">Sent, no receipt yet</th>
          <th scope="col">Delivered</th>
          <th scope="col">Read</th>
          <th scope="col">Failed</th>
          <th scope="col">Suppressed</th>
          <th scope="col">Cancelled</th>
        </tr>
      </thead>
      <tbody>
        ${tenant.accounts.map((a) => {
          const f = figures.get(a.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0, suppressed: 0, cancelled: 0 };
          return html`<tr data-account="${a.id}">
            <th scope="row">${a.displayName} (${a.phoneNumber})</th>
            <td>
              <strong>${a.status}</strong>
              ${a.status !== 'CONNECTED' ? html` — reason: <code>${a.lastErrorCode ?? 'not given'}</code>` : ''}
            </td>
            ${cell(a.id, a.displayName, f.sent, 'sent', 'sent')}
            ${cell(a.id, a.displayName, f.delivered, 'delivered', 'delivered')}
            ${cell(a.id, a.displayName, f.read, 'read', 'read')}
            ${cell(a.id, a.displayName, f.failed, 'failed', 'failed')}
            ${cell(a.id, a.displayName, f.suppressed, 'failed', 'suppressed', SEND_ERROR_CODES.RECIPIENT_OPTED_OUT)}
            ${cell(a.id, a.displayName, f.cancelled, 'cancelled', 'cancelled')}
          </tr>`;
        })}
      </tbody>
    </table>
  </section>`;
}
