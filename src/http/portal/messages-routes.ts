// Messages: GET /messages' filters and cursor paging (scheduled sends still waiting among them),
// one message with every field, its metadata and content, the processing block, the error with
// provider detail, and its timeline; and cancelling a message that has not left (owners).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import type { Message } from '../../messages/message-view.js';
import type { Session } from '../../portal/session-service.js';
import { AppError, errors } from '../../shared/errors.js';
import { MESSAGE_STATUSES } from '../../shared/vocab.js';
import { conversationLink, reactionsReceived } from './content-view.js';
import type { PortalDeps } from './deps.js';
import { idParam, tenantOf } from './deps.js';
import { parseWhen, when } from './format.js';
import { type Html, html } from './html.js';
import { type PageQuery, pageQuery } from './input.js';
import { confirmPage, doneNotice, errorBox, page, sandboxBadge } from './layout.js';
import { sendPage } from './reply.js';
import { dataTable, nextPageLink } from './tables.js';

const FILTERS = [
  'status',
  'chatAccountId',
  'externalId',
  'providerMessageId',
  'broadcastId',
  'scheduled',
  'since',
  'until',
] as const;

/**
 * The status as the portal shows it: a message cancelled before it left is `cancelled` (the API
 * keeps the spec's `failed` with error code CANCELLED or BROADCAST_CANCELLED).
 */
function shownStatus(m: Pick<Message, 'status' | 'lastErrorCode'>): string {
  return m.status === 'failed' && (m.lastErrorCode === 'CANCELLED' || m.lastErrorCode === 'BROADCAST_CANCELLED')
    ? 'cancelled'
    : m.status;
}

/** The status filter: the API's statuses, with `cancelled` apart from `failed`. */
const SHOWN_STATUSES = [...MESSAGE_STATUSES, 'cancelled'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A message that has not left yet can be cancelled, by an owner. */
const cancellable = (m: Message, session: Session) =>
  (m.status === 'pending' || m.status === 'queued') && session.role === 'owner';

/** Cancelling asks first: the link leads to a confirmation page whose button does it. */
function cancelLink(m: Message): Html {
  return html`<a href="/portal/messages/${m.messageId}/cancel" aria-label="Cancel message ${m.externalId}">Cancel…</a>`;
}

function timeline(m: Message) {
  return (
    [
      ['created (pending)', m.createdAt],
      ['scheduled for', m.scheduledAt],
      ['last attempt', m.processing.lastAttemptAt],
      ['sent', m.sentAt],
      ['delivered', m.deliveredAt],
      ['read', m.readAt],
      [shownStatus(m) === 'cancelled' ? 'cancelled' : 'failed', m.failedAt],
    ] as [string, string | null][]
  )
    .filter(([, at]) => at !== null)
    .sort((a, b) => a[1]!.localeCompare(b[1]!));
}

type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
type Listing = { messages: Message[]; nextCursor: string | null };

/** The list's loader: the filters as given (trimmed), checked, and the page of messages they select. */
async function loadMessages(
  deps: PortalDeps,
  caller: Caller,
  q: PageQuery,
): Promise<{ filters: Filters; listing: Listing | { error: Html } }> {
  const f: Filters = Object.fromEntries(FILTERS.map((k) => [k, q[k] ? q[k].trim() : undefined]));
  try {
    if (f.status && !(SHOWN_STATUSES as readonly string[]).includes(f.status))
      throw errors.validation([{ path: 'status', message: `must be one of ${SHOWN_STATUSES.join(', ')}` }]);
    if (f.broadcastId && !UUID.test(f.broadcastId))
      throw errors.validation([
        { path: 'broadcastId', message: 'is not a broadcast id (open the broadcast and follow its link)' },
      ]);
    const since = parseWhen(f.since, 'since');
    const until = parseWhen(f.until, 'until');
    if (since && until && since > until)
      throw errors.validation([{ path: 'until', message: 'must not be before “since”' }]);
    const result = await deps.messages.list(caller, {
      chatAccountId: f.chatAccountId,
      status: f.status === 'cancelled' ? 'failed' : f.status,
      cancelled: f.status === 'cancelled' ? true : f.status === 'failed' ? false : undefined,
      externalId: f.externalId,
      providerMessageId: f.providerMessageId,
      broadcastId: f.broadcastId?.toLowerCase(),
      scheduled: f.scheduled === 'true' ? true : undefined,
      since,
      until,
      limit: 50,
      cursor: q.cursor || undefined,
    });
    return { filters: f, listing: { messages: result.messages, nextCursor: result.nextCursor } };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { filters: f, listing: { error: errorBox(err) } };
  }
}

/** The list's view: the filter form (keeping what was given) and the table or the error. */
function messagesView(session: Session, tenant: Tenant, f: Filters, listing: Listing | { error: Html }): Html {
  return html`${filterForm(tenant, f)} ${'error' in listing ? listing.error : messagesTable(session, f, listing)}`;
}

function messagesTable(session: Session, f: Filters, listing: Listing): Html {
  const given = Object.fromEntries(Object.entries(f).filter((e): e is [string, string] => !!e[1]));
  return html`${dataTable(
    'Messages, newest first',
    ['Created', 'externalId', 'Recipient', 'Status', 'Error', 'Mode', 'Scheduled for', 'Cancel'],
    listing.messages.map(
      (m) =>
        html`<tr>
          <td>${when(m.createdAt)}</td>
          <td><a href="/portal/messages/${m.messageId}">${m.externalId}</a></td>
          <td>${m.recipient}</td>
          <td><span class="status status-${shownStatus(m)}">${shownStatus(m)}</span></td>
          <td>${m.error ? html`<code>${String(m.error.code)}</code>` : ''}</td>
          <td>${m.sandbox ? sandboxBadge(true) : 'live'}</td>
          <td>${m.scheduledAt ? when(m.scheduledAt) : ''}</td>
          <td>${cancellable(m, session) ? cancelLink(m) : ''}</td>
        </tr>`,
    ),
  )}
  ${listing.messages.length === 0 ? html`<p>No messages match.</p>` : ''}
  ${nextPageLink('/portal/messages', given, listing.nextCursor)}`;
}

function filterForm(tenant: Tenant, f: Filters): Html {
  return html`<form method="get" action="/portal/messages" class="filters">
    <div>
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">any</option>
        ${SHOWN_STATUSES.map((s) => html`<option value="${s}" ${f.status === s ? 'selected' : ''}>${s}</option>`)}
      </select>
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
    <div>
      <label for="externalId">externalId</label>
      <input id="externalId" name="externalId" value="${f.externalId ?? ''}" />
    </div>
    <div>
      <label for="providerMessageId">providerMessageId</label>
      <input id="providerMessageId" name="providerMessageId" value="${f.providerMessageId ?? ''}" />
    </div>
    <div>
      <label for="broadcastId">Broadcast</label>
      <input id="broadcastId" name="broadcastId" value="${f.broadcastId ?? ''}" />
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
  </form>`;
}

export function registerMessageRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/messages', async (request, reply) => {
    const { session, tenant, caller, ctx } = await tenantOf(deps, request);
    const { filters, listing } = await loadMessages(deps, caller, pageQuery(request));
    return sendPage(reply, page(ctx, 'Messages', messagesView(session, tenant, filters, listing)));
  });

  app.get('/messages/:id', async (request, reply) => {
    const done = doneNotice(pageQuery(request), { cancelled: 'Cancelled: the message will not be sent.' });
    return sendPage(reply, await messagePage(deps, request, idParam(request), html`${done}`));
  });

  app.get('/messages/:id/cancel', async (request, reply) => {
    const { caller, ctx } = await tenantOf(deps, request);
    const m = await deps.messages.get(caller, idParam(request));
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Cancel a message',
        html`<p>
          Cancel the message <strong>${m.externalId}</strong> to ${m.recipient}? It will not be sent; this cannot be
          undone.
        </p>`,
        `/portal/messages/${m.messageId}/cancel`,
        'Cancel the message',
        `/portal/messages/${m.messageId}`,
      ),
    );
  });

  app.post('/messages/:id/cancel', async (request, reply) => {
    // A viewer's POST never gets here (portal-plugin.ts refuses it).
    const { caller } = await tenantOf(deps, request);
    const id = idParam(request);
    try {
      await deps.messageCancel.cancel(caller, id);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, await messagePage(deps, request, id, errorBox(err)), err.status);
    }
    return reply.redirect(`/portal/messages/${id}?done=cancelled`, 303);
  });
}

/** One message with every field; `top` (a notice or an error) above it. */
async function messagePage(deps: PortalDeps, request: FastifyRequest, id: string, top: Html): Promise<Html> {
  const { session, tenant, caller, ctx } = await tenantOf(deps, request);
  const m = await deps.messages.get(caller, id);
  const extras = await deps.queries.messageExtras(tenant.customerId, m.messageId);
  const account = tenant.accounts.find((a) => a.id === m.chatAccountId);
  const fields: [string, unknown][] = [
    ['messageId', m.messageId],
    ['externalId', m.externalId],
    ['recipient', m.recipient],
    ['recipientUserId', m.recipientUserId],
    ['channel', m.channel],
    ['status', shownStatus(m)],
    ['attemptCount', m.attemptCount],
    ['lastErrorCode', m.lastErrorCode],
    ['broadcastId', m.broadcastId],
    ['chatAccountId', `${m.chatAccountId}${account ? ` (${account.displayName})` : ''}`],
    ['createdAt', m.createdAt],
    ['scheduledAt', m.scheduledAt],
    ['sentAt', m.sentAt],
    ['deliveredAt', m.deliveredAt],
    ['readAt', m.readAt],
    ['failedAt', m.failedAt],
    ['providerMessageId', m.providerMessageId],
    ['expiresAt', m.expiresAt],
    ['sandbox', m.sandbox],
    [
      'pricing',
      m.pricing
        ? `${m.pricing.category ?? '?'}, ${m.pricing.billable === null ? 'billable not said' : m.pricing.billable ? 'billable' : 'free'} (${m.pricing.type ?? '?'}, ${m.pricing.pricingModel ?? '?'})`
        : null,
    ],
  ];
  return page(
    ctx,
    `Message ${m.externalId}`,
    html`${top}${m.sandbox ? html`<p>${sandboxBadge(true)} Sent with a sandbox key: simulated, nothing was delivered.</p>` : ''}
      <dl class="fields">
        ${fields.map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v === null ? 'null' : String(v)}</dd>`,
        )}
      </dl>
      ${cancellable(m, session) ? cancelLink(m) : ''}
      <h2>Timeline</h2>
      <ol class="timeline">
        ${timeline(m).map(([what, at]) => html`<li><time datetime="${at!}">${when(at)}</time> ${what}</li>`)}
      </ol>
      <h2>Processing</h2>
      <dl class="fields">
        ${Object.entries(m.processing).map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v === null ? 'null' : String(v)}</dd>`,
        )}
      </dl>
      <h2>Error</h2>
      ${errorSection(m.error)}
      <h2>Metadata</h2>
      <pre>${m.metadata ? JSON.stringify(m.metadata, null, 2) : 'none'}</pre>
      <h2>Content</h2>
      <pre>${extras ? JSON.stringify(extras.content, null, 2) : ''}</pre>
      <h2>Reactions received</h2>
      ${reactionsReceived(m.reactions)}
      <p>${conversationLink(m.chatAccountId, m.recipient, 'The conversation with this number')}</p>
      <p><a href="/portal/messages">All messages</a></p>`,
  );
}

/** The message's error, with the provider's details when it has them. */
function errorSection(error: Message['error']) {
  const provider = (error?.provider ?? null) as Record<string, unknown> | null;
  return error
    ? html`<dl class="fields">
        <dt>code</dt>
        <dd><code>${String(error.code)}</code></dd>
        <dt>message</dt>
        <dd>${String(error.message ?? '')}</dd>
        ${
          provider
            ? html`<dt>provider</dt>
                <dd>
                  <dl class="fields">
                    ${Object.entries(provider).map(
                      ([k, v]) =>
                        html`<dt>${k}</dt>
                          <dd>${v === null ? 'null' : String(v)}</dd>`,
                    )}
                  </dl>
                </dd>`
            : ''
        }
      </dl>`
    : html`<p>None.</p>`;
}
