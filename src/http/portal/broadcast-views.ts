// The broadcasts' list and one broadcast's page (decision 0049): name, account, created, schedule,
// content, progress with cancelled messages counted as cancelled (the API counts them in failed).
import type { Tenant } from '../../auth/directory.js';
import type { Broadcast } from '../../broadcasts/broadcast-store.js';
import { roleName } from '../../portal/roles.js';
import { outboundContent } from './content-view.js';
import { number, when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { canWrite, type PageContext } from './layout.js';
import { dataTable, nextPageLink } from './tables.js';

/** The counts as the portal shows them: `failed` without the cancelled ones, `cancelled` apart. */
export function shownCounts(b: Broadcast): [string, number][] {
  const { pending, queued, sent, delivered, read, failed } = b.counts;
  return [
    ['pending', pending],
    ['queued', queued],
    ['sent', sent],
    ['delivered', delivered],
    ['read', read],
    ['failed', failed - b.cancelledMessages],
    ['cancelled', b.cancelledMessages],
  ];
}

/** Messages no longer waiting (sent, delivered, read, failed or cancelled). */
const processed = (b: Broadcast) => b.counts.sent + b.counts.delivered + b.counts.read + b.counts.failed;

function accountName(tenant: Tenant, id: string): string {
  const a = tenant.accounts.find((x) => x.id === id);
  return a ? `${a.displayName} (${a.phoneNumber})` : id;
}

/** A progress bar with its numbers in words (the bar is decoration for the text beside it). */
function progressBar(b: Broadcast): Html {
  const done = processed(b);
  return html`<progress max="${Math.max(1, b.recipients)}" value="${done}" aria-hidden="true"></progress>
    <span class="progress-text">${number(done)} of ${number(b.recipients)} processed</span>`;
}

/** The list: newest first, a page at a time. */
export function broadcastList(ctx: PageContext, tenant: Tenant, broadcasts: Broadcast[], nextCursor: string | null) {
  return html`${
    canWrite(ctx)
      ? html`<p><a href="/portal/broadcasts/new" class="button">New broadcast</a></p>`
      : html`<p class="muted">Your role is ${roleName(ctx.session.role)}: you cannot send broadcasts.</p>`
  }
  ${
    broadcasts.length === 0
      ? html`<p>No broadcast yet.</p>`
      : dataTable(
          'Broadcasts, newest first',
          ['Name', 'Account', 'Created', 'Progress', 'Status'],
          broadcasts.map(
            (b) =>
              html`<tr class="broadcast-row">
                <td><a href="/portal/broadcasts/${b.broadcastId}">${b.name ?? b.externalId}</a></td>
                <td>${accountName(tenant, b.chatAccountId)}</td>
                <td>
                  ${when(b.createdAt)}${b.sendAt ? html`<br /><span class="muted">for ${when(b.sendAt)}</span>` : ''}
                </td>
                <td>${progressBar(b)}</td>
                <td class="bstatus">${b.status}</td>
              </tr>`,
          ),
        )
  }
  ${nextPageLink('/portal/broadcasts', {}, nextCursor)}`;
}

/** The template values of a broadcast's recipients, by place (PortalQueries.broadcastValues). */
export type RecipientValues = {
  part: 'header' | 'body';
  place: number;
  messages: number;
  distinct: number;
  value: string;
}[];

/**
 * What the broadcast sends: the content in a line, and a template's values: the shared ones, or
 * per place, a value every recipient has (set for everyone) or each recipient's own.
 */
function contentPart(content: unknown, recipients: number, own: RecipientValues): Part {
  if (content === null || typeof content !== 'object') return html`<span class="muted">not recorded</span>`;
  const template = (content as { template?: { components?: { body?: unknown; header?: unknown } } }).template;
  const values = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const body = values(template?.components?.body);
  const header = values(template?.components?.header);
  const ownValue = (v: RecipientValues[number]) =>
    v.distinct === 1 && v.messages === recipients
      ? html`${v.value} <span class="muted">(the same for every recipient)</span>`
      : html`<span class="muted">each recipient's own</span>`;
  return html`${outboundContent(content)}
  ${
    body.length + header.length > 0
      ? html`<ul class="template-values">
          ${header.map((v, i) => html`<li>Header value ${i + 1}: ${v}</li>`)}
          ${body.map((v, i) => html`<li>Value ${i + 1}: ${v}</li>`)}
        </ul>`
      : own.length > 0
        ? html`<ul class="template-values">
            ${own.map(
              (v) => html`<li>${v.part === 'header' ? 'Header value' : 'Value'} ${v.place}: ${ownValue(v)}</li>`,
            )}
          </ul>`
        : (template ?? null) !== null
          ? html`<br /><span class="muted">Values: none (or each recipient's own, no longer kept)</span>`
          : ''
  }`;
}

/** The broadcast's fields: name, account, content, when. */
export function broadcastFields(tenant: Tenant, b: Broadcast, content: unknown, own: RecipientValues = []): Html {
  const rows: [string, Part][] = [
    ['Name', b.name ?? html`<span class="muted">none</span>`],
    ['Reference (externalId)', html`<code>${b.externalId}</code>`],
    ['Account', accountName(tenant, b.chatAccountId)],
    ['Content', contentPart(content, b.recipients, own)],
    ['Recipients', number(b.recipients)],
    ['Created', when(b.createdAt)],
    ['Scheduled for', b.sendAt ? when(b.sendAt) : 'at once'],
  ];
  return html`<dl class="fields broadcast-fields">
    ${rows.map(
      ([k, v]) =>
        html`<dt>${k}</dt>
          <dd>${v}</dd>`,
    )}
  </dl>`;
}

/** The progress block (polled while active): status, bar, counts in words, cancel link for owners. */
export function progressBlock(ctx: PageContext, b: Broadcast): Html {
  const link = (status: string) =>
    `/portal/messages?${new URLSearchParams({ broadcastId: b.broadcastId, status }).toString()}`;
  return html`<div
    id="progress"
    ${b.status === 'active' ? html`hx-get="/portal/broadcasts/${b.broadcastId}/progress" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}
  >
    <p>
      Status: <strong class="bstatus">${b.status}</strong> — ${number(processed(b))} of ${number(b.recipients)}
      processed.
    </p>
    <progress max="${Math.max(1, b.recipients)}" value="${processed(b)}" aria-label="Broadcast progress">
      ${processed(b)}/${b.recipients}
    </progress>
    <table class="counts">
      <caption>
        Messages of this broadcast by status
      </caption>
      <tbody>
        ${shownCounts(b).map(
          ([s, n]) =>
            html`<tr>
              <th scope="row">${s}</th>
              <td data-status="${s}">${n > 0 ? html`<a href="${link(s)}">${number(n)}</a>` : '0'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <p>${b.cancelledAt ? html`Cancelled ${when(b.cancelledAt)}.` : ''}</p>
    ${
      b.status === 'active' && canWrite(ctx)
        ? html`<p><a href="/portal/broadcasts/${b.broadcastId}/cancel">Cancel the broadcast…</a></p>`
        : ''
    }
    <p>
      <a href="/portal/messages?${new URLSearchParams({ broadcastId: b.broadcastId }).toString()}"
        >Messages of this broadcast</a
      >
    </p>
  </div>`;
}
