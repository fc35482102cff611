// Templates (plans Starter and up, accounts with a management credential): the catalog read live
// from the provider with status and quality, and creation of a text template with its examples.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import { AppError, errors } from '../../shared/errors.js';
import { type CreateTemplateRequest, CreateTemplateSchema } from '../../templates/template-definition.js';
import { toProblems, validatorCompiler } from '../validation.js';
import type { PortalDeps } from './deps.js';
import { audit, portalPrincipal, str, tenantOf } from './deps.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { canWrite, csrfField, doneNotice, errorBox, gate, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';
import { dataTable } from './tables.js';

const validate = validatorCompiler({
  schema: CreateTemplateSchema,
  httpPart: 'body',
  method: 'POST',
  url: '',
}) as unknown as ((data: unknown) => boolean) & { errors?: never[] | null };

/** The catalog of each official account (with the create form for owners), or the plan's gate. */
async function templatesPage(deps: PortalDeps, request: FastifyRequest, ctx: PageContext, tenant: Tenant, top: Part) {
  const caller = { principal: portalPrincipal(ctx.session), tenant };
  if (!deps.templates.catalogAllowed(caller))
    return page(ctx, 'Templates', gate(tenant.plan, 'templates', 'The template catalog'));
  const sections = await Promise.all(
    tenant.accounts
      .filter((a) => a.type === 'OFFICIAL')
      .map(async (a) => {
        const body = await templateTable(deps, caller, a);
        return html`<section class="card">
          <h2>${a.displayName} (${a.phoneNumber})</h2>
          ${body} ${canWrite(ctx) && a.hasManagementToken ? createForm(ctx, a) : ''}
        </section>`;
      }),
  );
  return page(ctx, 'Templates', html`${top}${sections.length === 0 ? html`<p>No official account.</p>` : sections}`);
}

type Account = Tenant['accounts'][number];

/** One account's templates from the provider, or why they cannot be shown. */
async function templateTable(deps: PortalDeps, caller: Caller, a: Account): Promise<Part> {
  try {
    const { templates } = await deps.templates.list(caller, a.id, { limit: 50 });
    return dataTable(
      html`Templates of ${a.displayName}`,
      ['Name', 'Language', 'Category', 'Status', 'Quality'],
      templates.map(
        (t) =>
          html`<tr>
            <td>${t.name}</td>
            <td>${t.language}</td>
            <td>${t.category}</td>
            <td>${t.status}${t.rejectedReason ? ` (${t.rejectedReason})` : ''}</td>
            <td>${t.qualityScore ? JSON.stringify(t.qualityScore) : '—'}</td>
          </tr>`,
      ),
    );
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return errorBox(err);
  }
}

/** The form that submits a new template of one account to the provider's review. */
function createForm(ctx: PageContext, a: Pick<Account, 'id'>) {
  return html`<form method="post" action="/portal/templates" class="stack">
    ${csrfField(ctx.session)}
    <input type="hidden" name="chatAccountId" value="${a.id}" />
    <label for="n-${a.id}">Name (a-z, 0-9, _)</label><input id="n-${a.id}" name="name" required />
    <label for="l-${a.id}">Language</label><input id="l-${a.id}" name="language" value="en" required />
    <label for="c-${a.id}">Category</label>
    <select id="c-${a.id}" name="category">
      <option>UTILITY</option>
      <option>MARKETING</option>
      <option>AUTHENTICATION</option>
    </select>
    <label for="f-${a.id}">Parameter format</label>
    <select id="f-${a.id}" name="parameterFormat">
      <option>POSITIONAL</option>
      <option>NAMED</option>
    </select>
    <label for="b-${a.id}">Body ({{1}} or {{name}})</label>
    <textarea id="b-${a.id}" name="body" rows="3" required></textarea>
    <label for="e-${a.id}">Examples, one per line: variable=example text</label>
    <textarea id="e-${a.id}" name="examples" rows="2"></textarea>
    <button type="submit">Create template</button>
  </form>`;
}

export function registerTemplateRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/templates', async (request, reply) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    const done = doneNotice(pageQuery(request), {
      created: 'Template created: the provider reviews it; its status is in the list below.',
    });
    return sendPage(reply, await templatesPage(deps, request, ctx, tenant, done));
  });

  app.post('/templates', async (request, reply) => {
    const { tenant, ctx, caller, session } = await tenantOf(deps, request);
    const b = request.body;
    const req = {
      name: str(b, 'name'),
      language: str(b, 'language'),
      category: str(b, 'category'),
      parameterFormat: str(b, 'parameterFormat'),
      body: str(b, 'body'),
      examples: str(b, 'examples')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l.includes('='))
        .map((l) => ({ name: l.slice(0, l.indexOf('=')).trim(), text: l.slice(l.indexOf('=') + 1).trim() })),
    } as CreateTemplateRequest;
    try {
      if (!validate(req)) throw errors.validation(toProblems(validate.errors ?? []));
      await deps.templates.create(caller, str(b, 'chatAccountId'), req);
      await audit(deps, request, session, 'template.create', `${req.name} (${req.language})`);
      // Post/redirect/get: a reload shows the catalog, it does not submit the template again.
      return reply.redirect('/portal/templates?done=created', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, await templatesPage(deps, request, ctx, tenant, errorBox(err)), err.status);
    }
  });
}
