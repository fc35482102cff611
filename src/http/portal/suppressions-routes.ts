// Suppression lists in the portal (issue #37, decision 0074): one chat account's opted-out numbers,
// newest first, searched by part of a number, a page at a time; an owner adds a number (with a
// reason) and removes one (a confirmation step first). Every change is audited. The API's own
// suppression service does the work (the same rules as /chat-accounts/{id}/suppressions).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Tenant } from '../../auth/directory.js';
import { AppError, errors } from '../../shared/errors.js';
import type { Suppression } from '../../suppressions/suppression-service.js';
import type { PortalDeps } from './deps.js';
import { audit, str, tenantOf } from './deps.js';
import { when } from './format.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, csrfField, doneNotice, errorBox, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';
import { dataTable, nextPageLink } from './tables.js';

const PATH = '/portal/suppressions';
/** How many entries a page shows. */
const PAGE_SIZE = 50;
/** The longest search the page takes (a number or a user id). */
const SEARCH_MAX = 64;

const SOURCES: Record<Suppression['source'], string> = {
  customer: 'Added by your team or your API key',
  keyword: 'The person sent an opt-out keyword',
  user_preferences: "The person's preferences in the app",
  provider_error: 'The provider refused to deliver (opted out)',
};

/** The account the page is about: the query's, when it is one of the customer's, else the first. */
function accountOf(tenant: Tenant, id: string | undefined) {
  return tenant.accounts.find((a) => a.id === id) ?? tenant.accounts[0] ?? null;
}

const accountWords = (a: { displayName: string; phoneNumber: string }) => `${a.displayName} (${a.phoneNumber})`;

function removeLink(accountId: string, phone: string): string {
  return `${PATH}/remove?${new URLSearchParams({ account: accountId, phone }).toString()}`;
}

type View = { accountId?: string; search?: string; cursor?: string };

/** The account's list (searched, one page), or the service's refusal in words. */
async function listOf(deps: PortalDeps, request: FastifyRequest, view: View) {
  const { tenant, caller, ctx } = await tenantOf(deps, request);
  const account = accountOf(tenant, view.accountId);
  if (!account) return { ctx, tenant, account, search: '', list: html`<p>You have no chat account yet.</p>` };
  const search = (view.search ?? '').trim().slice(0, SEARCH_MAX);
  try {
    const r = await deps.suppressions.list(caller, account.id, {
      limit: PAGE_SIZE,
      cursor: view.cursor || undefined,
      phoneContains: search || undefined,
    });
    const owner = ctx.session.role === 'owner';
    const list = html`${dataTable(
      `Suppressed numbers of ${accountWords(account)}, newest first`,
      ['Number', 'Reason', 'Why', 'Since', ...(owner ? ['Remove'] : [])],
      r.suppressions.map(
        (s) =>
          html`<tr>
            <td>${s.phone}</td>
            <td>${s.reason}</td>
            <td>${SOURCES[s.source] ?? s.source}</td>
            <td><time datetime="${s.since}">${when(s.since)}</time></td>
            ${
              owner
                ? html`<td><a href="${removeLink(account.id, s.phone)}" aria-label="Remove ${s.phone}">Remove</a></td>`
                : ''
            }
          </tr>`,
      ),
    )}
    ${
      r.suppressions.length === 0
        ? html`<p>${search ? 'No suppressed number matches.' : 'No number is suppressed.'}</p>`
        : ''
    }
    ${nextPageLink(PATH, { account: account.id, ...(search ? { q: search } : {}) }, r.nextCursor)}`;
    return { ctx, tenant, account, search, list };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ctx, tenant, account, search, list: errorBox(err) };
  }
}

function addForm(ctx: PageContext, accountId: string, values: { phone: string; reason: string }): Part {
  if (ctx.session.role !== 'owner') return '';
  return html`<h2>Add a number</h2>
    <p>Broadcasts and marketing templates to a suppressed number fail without being sent (RECIPIENT_OPTED_OUT).</p>
    <form method="post" action="${PATH}" class="stack">
      ${csrfField(ctx.session)}
      <input type="hidden" name="account" value="${accountId}" />
      <label for="add-phone">Phone number</label>
      <input
        id="add-phone"
        name="phone"
        type="tel"
        autocomplete="off"
        maxlength="40"
        required
        value="${values.phone}"
      />
      <label for="add-reason">Reason (optional)</label>
      <input id="add-reason" name="reason" maxlength="500" value="${values.reason}" />
      <button type="submit">Add to the list</button>
    </form>`;
}

/** The page: notices, the account and search form, the list, the add form (owners). */
async function suppressionsPage(
  deps: PortalDeps,
  request: FastifyRequest,
  view: View,
  extra: { top?: Part; values?: { phone: string; reason: string } } = {},
) {
  const { ctx, account, tenant, search, list } = await listOf(deps, request, view);
  const body = html`${doneNotice(pageQuery(request), {
    added: 'The number is on the suppression list.',
    listed: 'The number was already on the suppression list: its entry is unchanged.',
    removed: 'The number is off the suppression list.',
  })}
  ${extra.top ?? ''}
  ${
    account
      ? html`<form method="get" action="${PATH}" class="filters">
            <div>
              <label for="account">Chat account</label>
              <select id="account" name="account">
                ${tenant.accounts.map(
                  (a) =>
                    html`<option value="${a.id}" ${a.id === account.id ? html`selected` : ''}>
                      ${accountWords(a)}
                    </option>`,
                )}
              </select>
            </div>
            <div>
              <label for="q">Number contains</label>
              <input id="q" name="q" type="search" maxlength="${SEARCH_MAX}" value="${search}" />
            </div>
            <div><button type="submit">Search</button></div>
          </form>
          ${list} ${addForm(ctx, account.id, extra.values ?? { phone: '', reason: '' })}`
      : list
  }`;
  return page(ctx, 'Suppressions', body);
}

export function registerSuppressionPages(app: FastifyInstance, deps: PortalDeps): void {
  const render = (request: FastifyRequest, view: View, extra?: Parameters<typeof suppressionsPage>[3]) =>
    suppressionsPage(deps, request, view, extra);

  app.get('/suppressions', async (request, reply) => {
    const q = pageQuery(request);
    return sendPage(reply, await render(request, { accountId: q.account, search: q.q, cursor: q.cursor }));
  });

  app.post('/suppressions', async (request, reply) => {
    const { session, tenant, caller } = await tenantOf(deps, request);
    const accountId = str(request.body, 'account');
    const account = tenant.accounts.find((a) => a.id === accountId);
    const values = { phone: str(request.body, 'phone').slice(0, 40), reason: str(request.body, 'reason').trim() };
    try {
      if (!account) throw errors.notFound();
      if (values.reason.length > 500)
        throw new AppError(400, 'validation_error', { message: 'The reason is at most 500 characters.' });
      const { created, suppression } = await deps.suppressions.add(
        caller,
        account.id,
        values.phone,
        values.reason || 'Added in the portal',
      );
      if (created)
        await audit(deps, request, session, 'suppression.add', `${suppression.phone} on ${accountWords(account)}`);
      const qs = new URLSearchParams({ account: account.id, done: created ? 'added' : 'listed' });
      return reply.redirect(`${PATH}?${qs.toString()}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const top = errorBox(err, { phone: 'Phone number' });
      return sendPage(reply, await render(request, { accountId }, { top, values }), err.status);
    }
  });

  registerRemove(app, deps, render);
}

function registerRemove(
  app: FastifyInstance,
  deps: PortalDeps,
  render: (request: FastifyRequest, view: View, extra?: { top?: Part }) => ReturnType<typeof suppressionsPage>,
): void {
  app.get('/suppressions/remove', async (request, reply) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    const q = pageQuery(request);
    const account = tenant.accounts.find((a) => a.id === q.account);
    const phone = (q.phone ?? '').slice(0, 100);
    const back = account ? `${PATH}?${new URLSearchParams({ account: account.id }).toString()}` : PATH;
    if (!account || !phone) return reply.redirect(back, 303);
    return sendPage(
      reply,
      confirmPage(
        ctx,
        'Remove a suppressed number',
        html`<p>
          Take <strong>${phone}</strong> off the suppression list of ${accountWords(account)}? Broadcasts and marketing
          templates to it are sent again.
        </p>`,
        removeLink(account.id, phone),
        'Remove from the list',
        back,
      ),
    );
  });

  app.post('/suppressions/remove', async (request, reply) => {
    const { session, tenant, caller } = await tenantOf(deps, request);
    const q = pageQuery(request);
    const account = tenant.accounts.find((a) => a.id === q.account);
    const phone = (q.phone ?? '').slice(0, 100);
    try {
      if (!account) throw errors.notFound();
      await deps.suppressions.remove(caller, account.id, phone);
      await audit(deps, request, session, 'suppression.remove', `${phone} on ${accountWords(account)}`);
      return reply.redirect(`${PATH}?${new URLSearchParams({ account: account.id, done: 'removed' }).toString()}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, await render(request, { accountId: q.account }, { top: errorBox(err) }), err.status);
    }
  });
}
