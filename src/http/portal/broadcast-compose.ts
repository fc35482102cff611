// The broadcast compose form (decision 0049): a name, the account, a schedule, the content (text,
// or a template picked from the account's catalog with one field per variable), the recipients
// pasted or uploaded. Without JavaScript the template picker is a submit button that shows the
// chosen template's fields (the same POST as "Check recipients", which changes nothing).
import type { Caller } from '../../auth/caller.js';
import type { Tenant } from '../../auth/directory.js';
import { PROVIDER_TEXT_MAX } from '../../messages/content-kinds.js';
import { MAX_SEND_AT_LEAD_SECONDS } from '../../messages/schedule.js';
import { effectiveTtlSeconds, type Plan } from '../../plans/plans.js';
import { roleName } from '../../portal/roles.js';
import { AppError } from '../../shared/errors.js';
import { variablesOf } from '../../templates/template-definition.js';
import type { Template } from '../../templates/template-view.js';
import type { PortalDeps } from './deps.js';
import { str } from './deps.js';
import { html, type Part } from './html.js';
import { canWrite, csrfField, page, type PageContext } from './layout.js';

/** One catalog template, with the account it belongs to and its variables (BODY, then HEADER text). */
export type PickableTemplate = {
  key: string;
  accountId: string;
  accountName: string;
  name: string;
  language: string;
  status: string;
  body: string;
  bodyVariables: string[];
  headerVariables: string[];
};

export type Catalog = { templates: PickableTemplate[]; problems: string[] };

const textOf = (t: Template, type: string): string => {
  const c = t.components.find((x) => String(x.type).toUpperCase() === type);
  return typeof c?.text === 'string' ? c.text : '';
};

/**
 * How many days ahead the portal's broadcast may be scheduled: the API's bound (35 days) or, when
 * sooner, the messages' expiry (the default lifetime, clipped to the plan's retention), since a
 * send time must come before it. One number, in the form's label and in its refusal.
 */
export function sendAtLimitDays(plan: Plan): number {
  return Math.min(MAX_SEND_AT_LEAD_SECONDS, effectiveTtlSeconds(plan, undefined)) / 86400;
}

/** The picker's value for a template: account, name and language (none of them contain a colon). */
export const templateKey = (accountId: string, name: string, language: string) => `${accountId}:${name}:${language}`;

/**
 * Every official account's templates (the API's template service, first 50 each), or why an
 * account's catalog cannot be read. No catalog on plans without it, or accounts without a
 * management credential: the template is then typed by name.
 */
export async function loadCatalog(deps: PortalDeps, caller: Caller, tenant: Tenant): Promise<Catalog> {
  if (!deps.templates.catalogAllowed(caller)) return { templates: [], problems: [] };
  const accounts = tenant.accounts.filter((a) => a.type === 'OFFICIAL' && a.hasManagementToken);
  const lists = await Promise.all(
    accounts.map(async (a) => {
      try {
        const { templates } = await deps.templates.list(caller, a.id, { limit: 50 });
        return {
          templates: templates.map((t) => ({
            key: templateKey(a.id, t.name, t.language),
            accountId: a.id,
            accountName: a.displayName,
            name: t.name,
            language: t.language,
            status: t.status,
            body: textOf(t, 'BODY'),
            bodyVariables: variablesOf(textOf(t, 'BODY')),
            headerVariables: variablesOf(textOf(t, 'HEADER')),
          })),
          problems: [],
        };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return { templates: [], problems: [`The templates of ${a.displayName} cannot be read now: ${err.message}`] };
      }
    }),
  );
  return { templates: lists.flatMap((l) => l.templates), problems: lists.flatMap((l) => l.problems) };
}

/** The catalog template the form names (`template`), if any. */
export const pickedTemplate = (catalog: Catalog, body: unknown) =>
  catalog.templates.find((t) => t.key === str(body, 'template'));

/** The field names of a template's variables: `b<i>` for BODY, `h<i>` for HEADER. */
export const bodyField = (i: number) => `b${i}`;
export const headerField = (i: number) => `h${i}`;

function variableFields(t: PickableTemplate, b: unknown): Part {
  const field = (name: string, label: string) =>
    html`<label for="${name}">${label}</label>
      <input id="${name}" name="${name}" value="${str(b, name)}" maxlength="1024" />`;
  return html`<div id="template-vars" class="stack">
    <p>Template <strong>${t.name}</strong> (${t.language}) of ${t.accountName}: <q>${t.body}</q></p>
    ${t.headerVariables.map((v, i) => field(headerField(i), `Header {{${v}}}`))}
    ${t.bodyVariables.map((v, i) => field(bodyField(i), `Variable {{${v}}}`))}
    ${
      t.bodyVariables.length > 0
        ? html`<p class="muted">
            A value left empty is taken from the recipients' rows: the columns after the reference, one per variable in
            this order.
          </p>`
        : html`<p class="muted">This template has no variables.</p>`
    }
  </div>`;
}

/** The template part of the form: the catalog's picker and the chosen template's fields, or a template by name. */
function templatePart(catalog: Catalog, b: unknown): Part {
  const picked = pickedTemplate(catalog, b);
  const byAccount = new Map<string, PickableTemplate[]>();
  for (const t of catalog.templates) byAccount.set(t.accountName, [...(byAccount.get(t.accountName) ?? []), t]);
  const problems = catalog.problems.map((p) => html`<p class="muted">${p}</p>`);
  if (catalog.templates.length === 0)
    return html`${problems}
      <label for="templateName">Template name</label>
      <input id="templateName" name="templateName" value="${str(b, 'templateName')}" />
      <label for="templateLanguage">Template language</label>
      <input id="templateLanguage" name="templateLanguage" value="${str(b, 'templateLanguage') || 'en'}" />
      <label for="templateBody">Template body values, one per line ({{1}}, {{2}}, …)</label>
      <textarea id="templateBody" name="templateBody" rows="2">${str(b, 'templateBody')}</textarea>`;
  return html`${problems}
    <label for="template">Template (approved ones can be sent)</label>
    <select id="template" name="template">
      <option value="">Choose a template…</option>
      ${[...byAccount].map(
        ([account, ts]) =>
          html`<optgroup label="${account}">
            ${ts.map(
              (t) =>
                html`<option
                  value="${t.key}"
                  ${t.key === picked?.key ? 'selected' : ''}
                  ${t.status !== 'APPROVED' ? 'disabled' : ''}
                >
                  ${t.name} (${t.language})${t.status !== 'APPROVED' ? ` — ${t.status}` : ''}
                </option>`,
            )}
          </optgroup>`,
      )}
    </select>
    <button type="submit" name="step" value="pick" formnovalidate>Show the template's variables</button>
    ${picked ? variableFields(picked, b) : ''}`;
}

/** The text field, its content right after the tag. */
// prettier-ignore
const textarea = (text: string) =>
  html`<textarea id="text" name="text" rows="3" data-max-chars="${PROVIDER_TEXT_MAX}" data-counter="text-count" aria-describedby="text-count">${text}</textarea>`;

/** The text of a text broadcast, with its live counter against the provider's limit (portal.js). */
function textPart(b: unknown): Part {
  return html`<label for="text">Text (for a text broadcast)</label>
    ${textarea(str(b, 'text'))}
    <p id="text-count" class="hint" aria-live="polite">
      At most ${PROVIDER_TEXT_MAX.toLocaleString('en-US')} characters (the longest text the provider delivers).
    </p>`;
}

/** The compose form (a viewer sees why not), with `top` above it and `b` the form sent back. */
export function composePage(ctx: PageContext, tenant: Tenant, catalog: Catalog, top: Part, b: unknown = {}) {
  const template = str(b, 'contentType') === 'template';
  const picked = pickedTemplate(catalog, b);
  const account = str(b, 'chatAccountId');
  return page(
    ctx,
    'New broadcast',
    html`${top}
      <p><a href="/portal/broadcasts">All broadcasts</a></p>
      ${
        !canWrite(ctx)
          ? html`<p class="muted">Your role is ${roleName(ctx.session.role)}: you cannot send broadcasts.</p>`
          : html`<form
              id="compose"
              method="post"
              action="/portal/broadcasts/preview"
              enctype="multipart/form-data"
              class="stack"
              hx-post="/portal/broadcasts/preview"
              hx-encoding="multipart/form-data"
              hx-target="main"
              hx-select="main"
              hx-swap="outerHTML"
              data-swap-errors
            >
              ${csrfField(ctx.session)}
              <label for="name">Name (for your list of broadcasts)</label>
              <input id="name" name="name" maxlength="200" value="${str(b, 'name')}" />
              <label for="chatAccountId">Account${picked ? ' (a template is sent from its own account)' : ''}</label>
              <select id="chatAccountId" name="chatAccountId">
                ${tenant.accounts.map(
                  (a) =>
                    html`<option value="${a.id}" ${a.id === (picked?.accountId ?? account) ? 'selected' : ''}>
                      ${a.displayName} (${a.phoneNumber})
                    </option>`,
                )}
              </select>
              <label for="sendAt"
                >Send at (UTC; empty: now; from 1 minute to ${sendAtLimitDays(tenant.plan)} days ahead)</label
              >
              <input id="sendAt" name="sendAt" type="datetime-local" value="${str(b, 'sendAt')}" />
              <fieldset>
                <legend>Content</legend>
                <div>
                  <input id="ct-text" type="radio" name="contentType" value="text" ${template ? '' : 'checked'} />
                  <label for="ct-text">Text</label>
                  <input
                    id="ct-template"
                    type="radio"
                    name="contentType"
                    value="template"
                    ${template ? 'checked' : ''}
                  />
                  <label for="ct-template">Template</label>
                </div>
                <div class="stack">${textPart(b)} ${templatePart(catalog, b)}</div>
              </fieldset>
              <label for="recipients">Recipients: one per line, <code>phone[,externalId[,value,…]]</code></label>
              <textarea id="recipients" name="recipients" rows="6">${str(b, 'recipients')}</textarea>
              <label for="csv">…or a CSV file (phone, optional externalId, then values; a header row is skipped)</label>
              <input id="csv" name="csv" type="file" accept=".csv,text/csv,text/plain" />
              <button type="submit" name="step" value="check">Check recipients</button>
            </form>`
      }`,
  );
}
