// Messages: the list (messages-views.ts: search, filters, paging) and its CSV export (messages-csv.ts),
// one message with every field, its metadata and content, the processing block, the error with
// provider detail, and its timeline; and cancelling a message that has not left (owners).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Message } from '../../messages/message-view.js';
import { AppError } from '../../shared/errors.js';
import { conversationLink, reactionsReceived } from './content-view.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, tenantOf } from './deps.js';
import { when } from './format.js';
import { type Html, html } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, doneNotice, errorBox, page, sandboxBadge } from './layout.js';
import { sendMessagesCsv } from './messages-csv.js';
import { cancellable, cancelLink, loadMessages, messagesView, shownStatus } from './messages-views.js';
import { sendPage } from './reply.js';

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

export function registerMessageRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/messages', async (request, reply) => {
    const { session, tenant, caller, ctx } = await tenantOf(deps, request);
    const { filters, listing } = await loadMessages(deps, caller, pageQuery(request));
    return sendPage(reply, page(ctx, 'Messages', messagesView(session, tenant, filters, listing)));
  });

  // The filtered list as CSV (viewers too): the same filters and message queries, streamed.
  app.get('/messages.csv', async (request, reply) => {
    const { tenant, caller } = await tenantOf(deps, request);
    return sendMessagesCsv(deps, reply, caller, tenant, pageQuery(request));
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
    const { caller, session } = await tenantOf(deps, request);
    const id = idParam(request);
    try {
      const m = await deps.messageCancel.cancel(caller, id);
      await audit(deps, request, session, 'message.cancel', `${m.externalId} to ${m.recipient}`);
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
