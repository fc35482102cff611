// API keys: listed masked, created (the key shown once), revealed after the password is re-entered
// (audit-logged; keys from before June 2026 have only their hash), revoked after a confirmation.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Tenant } from '../../auth/directory.js';
import { keyWords, MAX_ACTIVE_KEYS } from '../../keys/key-service.js';
import { roleName } from '../../portal/roles.js';
import { AppError, errors } from '../../shared/errors.js';
import { TEMPLATE_ACCESS, type TemplateAccess } from '../../shared/vocab.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, recheckPassword, stashSecret, str, takeSecret, tenantOf } from './deps.js';
import { when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { pageQuery } from './input.js';
import {
  canWrite,
  copyButton,
  csrfField,
  doneNotice,
  errorBox,
  notice,
  page,
  type PageContext,
  sandboxBadge,
} from './layout.js';
import { sendPage } from './reply.js';

type KeyView = Awaited<ReturnType<PortalDeps['keys']['list']>>[number];

function readOnlyNote(ctx: PageContext): Html {
  return html`<p class="muted">
    Your role is ${roleName(ctx.session.role)}: you cannot create, reveal or revoke keys.
  </p>`;
}

function keysPage(ctx: PageContext, tenant: Tenant, keys: KeyView[], top: Part): Html {
  const active = keys.filter((k) => !k.revokedAt);
  const left = MAX_ACTIVE_KEYS - active.length;
  const owner = canWrite(ctx);
  const accountName = (id: string | null) =>
    id === null ? 'All accounts' : (tenant.accounts.find((a) => a.id === id)?.displayName ?? id);
  return page(
    ctx,
    'API keys',
    html`${top}
      <p class="${left === 0 ? 'warn' : ''}" id="key-limit">
        ${active.length} of ${MAX_ACTIVE_KEYS} active keys used.
        ${left === 0 ? 'Revoke a key before creating another.' : `You can create ${left} more.`}
      </p>
      <table>
        <caption>
          Your API keys (masked)
        </caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            <th scope="col">Scope</th>
            <th scope="col">Template access</th>
            <th scope="col">Mode</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${keys.map(
            (k) =>
              html`<tr class="${k.revokedAt ? 'revoked' : ''}">
                <td><code>${k.maskedKey}</code></td>
                <td>${k.name ?? '—'}</td>
                <td>${accountName(k.chatAccountId)}</td>
                <td>${k.templateAccess}</td>
                <td>${k.sandbox ? sandboxBadge(true) : 'live'}</td>
                <td>${when(k.createdAt)}</td>
                <td>${when(k.lastUsedAt)}</td>
                <td>
                  ${
                    k.revokedAt
                      ? html`Revoked ${when(k.revokedAt)}`
                      : html`${
                          !k.revealable
                            ? html`<span class="muted"
                                >Created before June 2026: only its hash is kept; it cannot be revealed.</span
                              >`
                            : owner
                              ? html`<form method="post" action="/portal/keys/${k.id}/reveal" class="inline">
                                  ${csrfField(ctx.session)}
                                  <label for="pw-${k.id}">Password</label>
                                  <input
                                    id="pw-${k.id}"
                                    name="password"
                                    type="password"
                                    autocomplete="current-password"
                                    required
                                  />
                                  <button type="submit">Reveal</button>
                                </form>`
                              : ''
                        }
                        ${owner ? html`<a href="/portal/keys/${k.id}/revoke">Revoke…</a>` : ''}`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${owner ? createForm(ctx, tenant, left) : readOnlyNote(ctx)}`,
  );
}

function createForm(ctx: PageContext, tenant: Tenant, left: number): Html {
  return html`<section aria-labelledby="new-key">
    <h2 id="new-key">Create a key</h2>
    ${
      left === 0
        ? html`<p class="warn">The limit of ${MAX_ACTIVE_KEYS} active keys is reached.</p>`
        : html`<form method="post" action="/portal/keys" class="stack">
            ${csrfField(ctx.session)}
            <label for="name">Name</label>
            <input id="name" name="name" maxlength="200" />
            <label for="chatAccountId">Scope</label>
            <select id="chatAccountId" name="chatAccountId">
              <option value="">All accounts</option>
              ${tenant.accounts.map((a) => html`<option value="${a.id}">${a.displayName} (${a.phoneNumber})</option>`)}
            </select>
            <label for="templateAccess">Template access</label>
            <select id="templateAccess" name="templateAccess">
              ${TEMPLATE_ACCESS.map((t) => html`<option value="${t}">${t}</option>`)}
            </select>
            <div>
              <input id="sandbox" name="sandbox" type="checkbox" value="true" />
              <label for="sandbox">Sandbox key (simulates sends; nothing is delivered, no quota used)</label>
            </div>
            <label for="create-password">Your password (to confirm)</label>
            <input id="create-password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit">Create key</button>
          </form>`
    }
  </section>`;
}

function shownOnce(title: string, key: string): Html {
  return notice(
    html`<p><strong>${title}</strong></p>
      <p><code id="shown-key" class="secret">${key}</code> ${copyButton('shown-key')}</p>`,
  );
}

/** The notice above the keys: a key shown once (new or revealed), or what a form just did. */
function keysNotice(request: FastifyRequest, shown: Awaited<ReturnType<typeof takeSecret>>): Part {
  return shown === 'gone'
    ? notice('This key was shown once and is no longer shown here. Reveal it again with your password.')
    : shown?.kind === 'key.created'
      ? shownOnce(
          'Your new key. It is shown once here; copy it now (you can reveal it later with your password).',
          shown.value,
        )
      : shown
        ? shownOnce('The full key (this reveal is recorded in the audit log):', shown.value)
        : doneNotice(pageQuery(request), {
            revoked: 'The key is revoked. Requests with it are refused from now on.',
            'not-revealable': 'This key was created before June 2026: only its hash exists, it cannot be revealed.',
          });
}

function revokePage(ctx: PageContext, key: KeyView): Html {
  return page(
    ctx,
    'Revoke a key',
    html`<p class="warn" role="alert">
        Revoking <code>${key.maskedKey}</code> (${key.name ?? 'no name'}) is
        <strong>immediate and irreversible</strong>: every request with it is refused at once (401), and it cannot be
        restored.
      </p>
      <form method="post" action="/portal/keys/${key.id}/revoke" class="inline">
        ${csrfField(ctx.session)}
        <button type="submit" class="danger">Revoke now</button>
      </form>
      <a href="/portal/keys">Cancel</a>`,
  );
}

/** The words of a key of this customer, or not found. */
async function keyNamed(deps: PortalDeps, customerId: string, id: string): Promise<string> {
  const key = (await deps.keys.list(customerId)).find((k) => k.id === id);
  if (!key) throw errors.notFound();
  return keyWords(key);
}

export function registerKeyRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const render = async (request: FastifyRequest, top: Part = '', status = 200) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    return { page: keysPage(ctx, tenant, await deps.keys.list(tenant.customerId), top), status };
  };

  // Every form here redirects back to this page (post/redirect/get): a reload repeats nothing. A
  // new or revealed key waits server-side for this one view (`?shown=`) and is gone after it.
  app.get('/keys', async (request, reply) => {
    const shown = await takeSecret(deps, request, 'key.');
    const r = await render(request, keysNotice(request, shown));
    return sendPage(reply, r.page);
  });

  app.post('/keys', async (request, reply) => {
    const { session, tenant } = await tenantOf(deps, request);
    const access = str(request.body, 'templateAccess') || 'none';
    const scope = str(request.body, 'chatAccountId');
    try {
      if (!(TEMPLATE_ACCESS as readonly string[]).includes(access))
        throw errors.validation([{ path: 'templateAccess', message: `must be one of ${TEMPLATE_ACCESS.join(', ')}` }]);
      const name = str(request.body, 'name').trim();
      if (name.length > 200) throw errors.validation([{ path: 'name', message: 'must be at most 200 characters' }]);
      await recheckPassword(deps, request, session, 'key.create', null);
      const created = await deps.keys.create(tenant.customerId, {
        name: name === '' ? null : name,
        chatAccountId: scope === '' ? null : scope,
        templateAccess: access as TemplateAccess,
        sandbox: str(request.body, 'sandbox') === 'true',
      });
      await audit(deps, request, session, 'key.create', keyWords(created));
      const shown = await stashSecret(deps, request, 'key.created', created.key);
      return reply.redirect(`/portal/keys?shown=${shown}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const r = await render(request, errorBox(err));
      return sendPage(reply, r.page, err.status === 401 ? 403 : err.status);
    }
  });

  app.post('/keys/:id/reveal', async (request, reply) => {
    const { session, tenant } = await tenantOf(deps, request);
    const id = idParam(request);
    const named = await keyNamed(deps, tenant.customerId, id);
    try {
      await recheckPassword(deps, request, session, 'key.reveal', named);
      const { key } = await deps.keys.reveal(tenant.customerId, id);
      if (key === null) return reply.redirect('/portal/keys?done=not-revealable', 303);
      await audit(deps, request, session, 'key.reveal', named);
      const shown = await stashSecret(deps, request, 'key.revealed', key);
      return reply.redirect(`/portal/keys?shown=${shown}`, 303);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      const r = await render(request, errorBox(err));
      return sendPage(reply, r.page, err.status === 401 ? 403 : err.status);
    }
  });

  app.get('/keys/:id/revoke', async (request, reply) => {
    const { ctx, tenant } = await tenantOf(deps, request);
    const id = idParam(request);
    const key = (await deps.keys.list(tenant.customerId)).find((k) => k.id === id);
    if (!key) throw errors.notFound();
    // Back to the confirmation after the key was revoked: say so, and lead back to the keys.
    if (key.revokedAt)
      return sendPage(
        reply,
        page(
          ctx,
          'Key already revoked',
          html`<p role="status">This key was revoked ${when(key.revokedAt)}; there is nothing more to do.</p>
            <p><a href="/portal/keys">Back to API keys</a></p>`,
        ),
      );
    return sendPage(reply, revokePage(ctx, key));
  });

  app.post('/keys/:id/revoke', async (request, reply) => {
    const { session, tenant } = await tenantOf(deps, request);
    const id = idParam(request);
    const named = await keyNamed(deps, tenant.customerId, id);
    await deps.keys.revoke(id, tenant.customerId);
    await audit(deps, request, session, 'key.revoke', named);
    return reply.redirect('/portal/keys?done=revoked', 303);
  });
}
