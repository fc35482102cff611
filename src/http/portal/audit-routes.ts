// The audit log: who did what sensitive thing (create, reveal or revoke a key, add an endpoint,
// rotate its secret, ...), newest first, for the owners of the customer. Viewers are told that
// only owners see it: it names people and the addresses they came from.
import type { FastifyInstance } from 'fastify';

import type { PortalDeps } from './deps.js';
import { tenantOf } from './deps.js';
import { when } from './format.js';
import { html } from './html.js';
import { page } from './layout.js';
import { sendPage } from './reply.js';

/** How many entries the page shows (the newest). */
export const AUDIT_PAGE_SIZE = 100;

export function registerAuditRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/audit', async (request, reply) => {
    const { session, ctx } = await tenantOf(deps, request);
    if (session.role !== 'owner') {
      return sendPage(
        reply,
        page(ctx, 'Audit log', html`<p role="alert">Only owners of your account see the audit log.</p>`),
        403,
      );
    }
    const entries = await deps.audit.recent(session.customerId, AUDIT_PAGE_SIZE);
    return sendPage(
      reply,
      page(
        ctx,
        'Audit log',
        entries.length === 0
          ? html`<p>Nothing recorded yet.</p>`
          : html`<table id="audit">
              <caption>
                The newest ${entries.length} entries (at most ${AUDIT_PAGE_SIZE})
              </caption>
              <thead>
                <tr>
                  <th scope="col">When (UTC)</th>
                  <th scope="col">Who</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">From address</th>
                </tr>
              </thead>
              <tbody>
                ${entries.map(
                  (e) =>
                    html`<tr>
                      <td>${when(e.at)}</td>
                      <td>${e.email ?? '(a removed user)'}</td>
                      <td><code>${e.action}</code></td>
                      <td>${e.target ? html`<code>${e.target}</code>` : '—'}</td>
                      <td>${e.ip ?? '—'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`,
      ),
    );
  });
}
