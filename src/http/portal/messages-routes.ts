// Messages: the list (messages-views.ts: search, filters, paging) and its CSV export (messages-csv.ts),
// one message with every field, its metadata and content, the processing block, the error with
// provider detail, and its timeline; and cancelling a message that has not left (owners).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import { AppError } from '../../shared/errors.js';
import { conversationLink, outboundContent, reactionsReceived } from './content-view.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, tenantOf } from './deps.js';
import { type Html, html } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, doneNotice, errorBox, page, sandboxBadge } from './layout.js';
import { errorFields, messageFields, timelineView } from './message-page.js';
import { sendMessagesCsv } from './messages-csv.js';
import { cancellable, cancelLink, loadMessages, messagesView } from './messages-views.js';
import { sendPage } from './reply.js';

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

/** One message investigated (message-page.ts); `top` (a notice or an error) above it. */
async function messagePage(deps: PortalDeps, request: FastifyRequest, id: string, top: Html): Promise<Html> {
  const { session, tenant, caller, ctx } = await tenantOf(deps, request);
  const m = await deps.messages.get(caller, id);
  const [extras, history] = await Promise.all([
    deps.queries.messageExtras(tenant.customerId, m.messageId),
    deps.queries.messageHistory(tenant.customerId, m.messageId),
  ]);
  return page(
    ctx,
    `Message ${m.externalId}`,
    html`${top}${m.sandbox ? html`<p>${sandboxBadge(true)} Sent with a sandbox key: simulated, nothing was delivered.</p>` : ''}
      ${messageFields(m, tenant)} ${cancellable(m, session) ? cancelLink(m) : ''}
      <h2>Timeline</h2>
      ${timelineView(m, history)}
      <h2>Error</h2>
      ${errorFields(m.error as Parameters<typeof errorFields>[0])}
      <h2>Metadata</h2>
      ${m.metadata ? html`<pre>${JSON.stringify(m.metadata, null, 2)}</pre>` : html`<p>None.</p>`}
      <h2>Content</h2>
      ${
        extras
          ? html`<p>${outboundContent(extras.content)}</p>
              <details>
                <summary>The content as sent to the API</summary>
                <pre>${JSON.stringify(extras.content, null, 2)}</pre>
              </details>`
          : ''
      }
      <h2>Reactions received</h2>
      ${reactionsReceived(m.reactions)}
      <p>${conversationLink(m.chatAccountId, m.recipient, 'The conversation with this number')}</p>
      <p><a href="/portal/messages">All messages</a></p>`,
  );
}
