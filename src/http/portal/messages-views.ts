// The messages list: its filters (search by recipient, part of an externalId, provider id,
// status, error code, account, broadcast, period), read from the query string and checked; the page of
// messages they select through the API's message queries; and the view (filter form kept filled,
// table with account and content kind, previous/next links carrying the filters, the CSV export link).
import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import { type ListQuery, SEARCH_MAX } from '../../messages/message-store.js';
import type { Message } from '../../messages/message-view.js';
import type { Session } from '../../portal/session-service.js';
import { providerErrorCodes } from '../../provider/error-map.js';
import { AppError, errors } from '../../shared/errors.js';
import { isCancelled, MESSAGE_STATUSES, SEND_ERROR_CODES } from '../../shared/vocab.js';
import type { PortalDeps } from './deps.js';
import { number, parseWhen, when } from './format.js';
import { type Html, html } from './html.js';
import type { PageQuery } from './input.js';
import { errorBox, sandboxBadge } from './layout.js';
import { dataTable } from './tables.js';

export const FILTERS = [
  'recipient',
  'externalId',
  'providerMessageId',
  'status',
  'errorCode',
  'chatAccountId',
  'broadcastId',
  'scheduled',
  'period',
  'since',
  'until',
] as const;

/** Every error code a message can carry, for the error-code filter's choice list. */
const ERROR_CODES = [...new Set([...Object.values(SEND_ERROR_CODES), ...providerErrorCodes()])].sort();

/** The period presets: the messages of the last hour, day, week or 30 days ("since" then left empty). */
const PERIODS: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'the last hour', ms: 3600_000 },
  '24h': { label: 'the last 24 hours', ms: 86400_000 },
  '7d': { label: 'the last 7 days', ms: 7 * 86400_000 },
  '30d': { label: 'the last 30 days', ms: 30 * 86400_000 },
};

export type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

/** Rows on one page of the list. */
const PAGE_SIZE = 50;

/**
 * The status as the portal shows it: a message cancelled before it left is `cancelled` (the API
 * keeps the spec's `failed` with error code CANCELLED or BROADCAST_CANCELLED).
 */
export function shownStatus(m: Pick<Message, 'status' | 'lastErrorCode'>): string {
  return isCancelled(m.status, m.lastErrorCode) ? 'cancelled' : m.status;
}

/** The status filter: the API's statuses, with `cancelled` apart from `failed`. */
const SHOWN_STATUSES = [...MESSAGE_STATUSES, 'cancelled'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FULL_NUMBER = /^\+[1-9]\d{6,14}$/;

/** A message that has not left yet can be cancelled, by an owner. */
export const cancellable = (m: Message, session: Session) =>
  (m.status === 'pending' || m.status === 'queued') && session.role === 'owner';

/** Cancelling asks first: the link leads to a confirmation page whose button does it. */
export function cancelLink(m: Message): Html {
  return html`<a href="/portal/messages/${m.messageId}/cancel" aria-label="Cancel message ${m.externalId}">Cancel…</a>`;
}

/** The filters given in the query string, trimmed; empty ones left out. */
export function filtersOf(q: PageQuery): Filters {
  const f: Filters = {};
  for (const k of FILTERS) if (q[k]?.trim()) f[k] = q[k].trim();
  return f;
}

const invalid = (path: string, message: string) => errors.validation([{ path, message }]);

/** The recipient filter: a whole number matches it exactly; digits alone (spaces, dashes dropped) match part of it. */
function recipientFilter(text: string): Pick<ListQuery, 'recipient' | 'recipientContains'> {
  if (FULL_NUMBER.test(text)) return { recipient: text };
  const digits = text.replace(/[\s().-]/g, '');
  if (!/^\+?\d{1,15}$/.test(digits))
    throw invalid('recipient', 'must be a phone number or some of its digits, such as +4915 or 5550');
  return { recipientContains: digits };
}

/** The filters as the message queries take them; a filter that makes no sense is refused with words. */
export function searchQuery(f: Filters): Omit<ListQuery, 'limit'> {
  for (const k of ['recipient', 'externalId', 'providerMessageId'] as const)
    if ((f[k]?.length ?? 0) > SEARCH_MAX) throw invalid(k, `must be at most ${SEARCH_MAX} characters`);
  if (f.status && !(SHOWN_STATUSES as readonly string[]).includes(f.status))
    throw invalid('status', `must be one of ${SHOWN_STATUSES.join(', ')}`);
  if (f.broadcastId && !UUID.test(f.broadcastId))
    throw invalid('broadcastId', 'is not a broadcast id (open the broadcast and follow its link)');
  if (f.chatAccountId && !UUID.test(f.chatAccountId)) throw invalid('chatAccountId', 'is not one of your accounts');
  if (f.errorCode && !/^[A-Za-z0-9_.-]{1,64}$/.test(f.errorCode))
    throw invalid('errorCode', 'must be an error code such as RECIPIENT_OPTED_OUT');
  if (f.period && !(f.period in PERIODS)) throw invalid('period', `must be one of ${Object.keys(PERIODS).join(', ')}`);
  // A preset counts back from now; a "since" typed in wins over it.
  const since = parseWhen(f.since, 'since') ?? (f.period ? new Date(Date.now() - PERIODS[f.period]!.ms) : undefined);
  const until = parseWhen(f.until, 'until');
  if (since && until && since > until) throw invalid('until', 'must not be before “since”');
  return {
    ...(f.recipient ? recipientFilter(f.recipient) : {}),
    chatAccountId: f.chatAccountId?.toLowerCase(),
    status: f.status === 'cancelled' ? 'failed' : f.status,
    cancelled: f.status === 'cancelled' ? true : f.status === 'failed' ? false : undefined,
    // Error codes are upper case: recipient_opted_out finds RECIPIENT_OPTED_OUT.
    lastErrorCode: f.errorCode?.toUpperCase(),
    externalIdContains: f.externalId,
    providerMessageId: f.providerMessageId,
    broadcastId: f.broadcastId?.toLowerCase(),
    scheduled: f.scheduled === 'true' ? true : undefined,
    since,
    until,
  };
}

type Listing = {
  messages: Message[];
  contentKinds: string[];
  /** A text's text, a file's caption, a template's name and values (the message store's words). */
  contentWords: string[];
  nextCursor: string | null;
  prevCursor: string | null;
  /** Which page this is (1 for the first), carried by the links: the rows' numbers without counting them all. */
  pageNumber: number;
};

/** The list's loader: the filters as given, checked, and the page of messages they select. */
export async function loadMessages(
  deps: PortalDeps,
  caller: Caller,
  q: PageQuery,
): Promise<{ filters: Filters; listing: Listing | { error: Html } }> {
  const filters = filtersOf(q);
  try {
    const result = await deps.messages.search(caller, {
      ...searchQuery(filters),
      limit: PAGE_SIZE,
      cursor: q.cursor || undefined,
      before: q.before || undefined,
    });
    const n = Number(q.page);
    const pageNumber = Number.isSafeInteger(n) && n >= 1 && n <= 1_000_000 ? n : 1;
    return { filters, listing: { ...result, pageNumber: result.prevCursor === null ? 1 : Math.max(pageNumber, 2) } };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { filters, listing: { error: errorBox(err) } };
  }
}

/** The list's view: the filter form (keeping what was given) and the table or the error. */
export function messagesView(session: Session, tenant: Tenant, f: Filters, listing: Listing | { error: Html }): Html {
  return html`${filterForm(tenant, f)}
  ${'error' in listing ? listing.error : messagesTable(session, tenant, f, listing)}`;
}

/** `/portal/messages` (or `.csv`) with the filters and `extra`. */
function listUrl(path: string, f: Filters, extra: Record<string, string> = {}): string {
  const qs = new URLSearchParams({ ...(f as Record<string, string>), ...extra }).toString();
  return qs ? `${path}?${qs}` : path;
}

function messagesTable(session: Session, tenant: Tenant, f: Filters, listing: Listing): Html {
  const accountName = (id: string) => tenant.accounts.find((a) => a.id === id)?.displayName ?? id;
  const first = (listing.pageNumber - 1) * PAGE_SIZE + 1;
  const shown = listing.messages.length;
  return html`<p class="list-actions">
      <a href="${listUrl('/portal/messages.csv', f)}" download>Export CSV</a>
      (every message these filters select, at most ${number(CSV_MAX_ROWS)} rows)
    </p>
    ${dataTable(
      shown === 0
        ? 'Messages, newest first'
        : `Messages, newest first: ${number(first)}–${number(first + shown - 1)}${listing.nextCursor ? '' : ` of ${number(first + shown - 1)}`}`,
      [
        'Created',
        'externalId',
        'Recipient',
        'Account',
        'Content',
        'Status',
        'Error',
        'Mode',
        'Scheduled for',
        'Cancel',
      ],
      listing.messages.map(
        (m, i) =>
          html`<tr>
            <td><time datetime="${m.createdAt}">${when(m.createdAt)}</time></td>
            <td><a href="/portal/messages/${m.messageId}">${m.externalId}</a></td>
            <td>${m.recipient}</td>
            <td>${accountName(m.chatAccountId)}</td>
            <td>${contentPreview(listing.contentKinds[i] ?? '', listing.contentWords[i] ?? '')}</td>
            <td><span class="status status-${shownStatus(m)}">${shownStatus(m)}</span></td>
            <td>${m.error ? html`<code>${String(m.error.code)}</code>` : ''}</td>
            <td>${m.sandbox ? sandboxBadge(true) : 'live'}</td>
            <td>${m.scheduledAt ? html`<time datetime="${m.scheduledAt}">${when(m.scheduledAt)}</time>` : ''}</td>
            <td>${cancellable(m, session) ? cancelLink(m) : ''}</td>
          </tr>`,
      ),
    )}
    ${shown === 0 ? html`<p>No messages match.</p>` : ''} ${pager(f, listing)}`;
}

/** How many characters of a message's words the list shows. */
const PREVIEW_CHARS = 80;

function shortened(words: string): string {
  const chars = [...words.replace(/\s+/g, ' ').trim()];
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 1).join('')}…` : chars.join('');
}

/**
 * The list's Content cell in words: a text's first characters; "Template <name>" and its values;
 * a file's kind and caption. Never the content's JSON.
 */
export function contentPreview(kind: string, words: string): Html {
  if (kind === 'template') {
    const at = words.indexOf(': ');
    const name = at < 0 ? words : words.slice(0, at);
    const values = at < 0 ? '' : words.slice(at + 2);
    return html`<span class="kind">Template</span> <strong>${name}</strong>${
        values ? html`<br /><span class="preview">${shortened(values)}</span>` : ''
      }`;
  }
  if (kind === 'text') return html`<span class="preview">${shortened(words)}</span>`;
  return html`<span class="kind">${kind}</span
    >${words ? html`<br /><span class="preview">${shortened(words)}</span>` : ''}`;
}

/** Previous and next page links, each carrying the filters and the page number. */
function pager(f: Filters, listing: Listing): Html | string {
  const { prevCursor, nextCursor, pageNumber } = listing;
  if (!prevCursor && !nextCursor) return '';
  return html`<nav class="pager" aria-label="Pages">
    ${
      prevCursor
        ? html`<a
            rel="prev"
            href="${listUrl('/portal/messages', f, { before: prevCursor, page: String(pageNumber - 1) })}"
            >Previous page</a
          >`
        : ''
    }
    ${
      nextCursor
        ? html`<a
            rel="next"
            href="${listUrl('/portal/messages', f, { cursor: nextCursor, page: String(pageNumber + 1) })}"
            >Next page</a
          >`
        : ''
    }
  </nav>`;
}

/** The most rows one CSV export holds (docs/portal.md, decision 0043). */
export const CSV_MAX_ROWS = 50_000;

function textField(id: string, label: string, value: string | undefined): Html {
  return html`<div>
    <label for="${id}">${label}</label>
    <input id="${id}" name="${id}" value="${value ?? ''}" maxlength="${SEARCH_MAX}" />
  </div>`;
}

function filterForm(tenant: Tenant, f: Filters): Html {
  return html`<form method="get" action="/portal/messages" class="filters">
    ${textField('recipient', 'Recipient (number or part of it)', f.recipient)}
    ${textField('externalId', 'externalId (or part of it)', f.externalId)}
    ${textField('providerMessageId', 'Provider message id', f.providerMessageId)}
    <div>
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">any</option>
        ${SHOWN_STATUSES.map((s) => html`<option value="${s}" ${f.status === s ? 'selected' : ''}>${s}</option>`)}
      </select>
    </div>
    <div>
      <label for="errorCode">Error code</label>
      <input
        id="errorCode"
        name="errorCode"
        value="${f.errorCode ?? ''}"
        maxlength="64"
        list="error-codes"
        autocomplete="off"
        spellcheck="false"
      />
      <datalist id="error-codes">${ERROR_CODES.map((c) => html`<option value="${c}"></option>`)}</datalist>
    </div>
    <div>
      <label for="scheduled">Scheduled</label>
      <select id="scheduled" name="scheduled">
        <option value="">any</option>
        <option value="true" ${f.scheduled === 'true' ? 'selected' : ''}>scheduled, waiting</option>
      </select>
    </div>
    <div>
      <label for="chatAccountId">Account</label>
      <select id="chatAccountId" name="chatAccountId">
        <option value="">any</option>
        ${tenant.accounts.map(
          (a) =>
            html`<option value="${a.id}" ${f.chatAccountId === a.id ? 'selected' : ''}>
              ${a.displayName} (${a.phoneNumber})
            </option>`,
        )}
      </select>
    </div>
    ${textField('broadcastId', 'Broadcast', f.broadcastId)}
    <div>
      <label for="period">Period</label>
      <select id="period" name="period">
        <option value="">any time (or the dates)</option>
        ${Object.entries(PERIODS).map(
          ([k, p]) => html`<option value="${k}" ${f.period === k ? 'selected' : ''}>${p.label}</option>`,
        )}
      </select>
    </div>
    <div>
      <label for="since">Since (UTC)</label>
      <input id="since" name="since" type="datetime-local" value="${f.since ?? ''}" />
    </div>
    <div>
      <label for="until">Until (UTC)</label>
      <input id="until" name="until" type="datetime-local" value="${f.until ?? ''}" />
    </div>
    <button type="submit">Filter</button>
    <a href="/portal/messages">Clear filters</a>
  </form>`;
}
