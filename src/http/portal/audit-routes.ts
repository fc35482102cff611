// The audit log: who changed what (keys, webhooks, rules, filters, broadcasts, cancels, templates,
// redeliveries, logins, the team; the operator's and API keys' changes too), the target named in
// words, newest first, a page at a time (keyset: `?cursor=` from the page before), for the owners
// of the customer. Viewers are told that only owners see it: it names people and their addresses.
import type { FastifyInstance } from 'fastify';

import type { PortalDeps } from './deps.js';
import { tenantOf } from './deps.js';
import { when } from './format.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { page } from './layout.js';
import { sendPage } from './reply.js';
import { dataTable, nextPageLink } from './tables.js';

/** How many entries a page shows. */
export const AUDIT_PAGE_SIZE = 50;

export function registerAuditRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/audit', async (request, reply) => {
    const { session, ctx } = await tenantOf(deps, request);
    const cursor = pageQuery(request).cursor || undefined;
    const r = await deps.audit.page(session.customerId, { limit: AUDIT_PAGE_SIZE, cursor });
    const rows = r.entries.map(
      (e) =>
        html`<tr>
          <td>${when(e.at)}</td>
          <td>${e.email ?? '(a removed user)'}</td>
          <td><code>${e.action}</code></td>
          <td>${e.target ?? '—'}</td>
          <td>${e.ip ?? '—'}</td>
        </tr>`,
    );
    return sendPage(
      reply,
      page(
        ctx,
        'Audit log',
        r.entries.length === 0
          ? html`<p>${cursor ? 'No older entries.' : 'Nothing recorded yet.'}</p>`
          : html`<div id="audit">
              ${dataTable(
                cursor ? `Older entries, ${AUDIT_PAGE_SIZE} at most` : `The newest entries, ${AUDIT_PAGE_SIZE} at most`,
                ['When (UTC)', 'Who', 'Action', 'Target', 'From address'],
                rows,
              )}
              ${nextPageLink('/portal/audit', {}, r.nextCursor)}
              ${cursor ? html`<p><a href="/portal/audit">Newest entries</a></p>` : ''}
            </div>`,
      ),
    );
  });
}
