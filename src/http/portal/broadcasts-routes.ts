// Broadcasts (plans Basic and Pro): compose, recipients pasted or uploaded as CSV with every row
// checked (by POST /messages/broadcast's own rules) before sending, the quota it would use,
// progress while it runs, cancel.
import crypto from 'node:crypto';

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import {
  broadcastProblems,
  type BroadcastRequest,
  BroadcastRequestSchema,
  MAX_BROADCAST_RECIPIENTS,
} from '../../broadcasts/broadcast-request.js';
import { parseRecipients, type RecipientRow } from '../../portal/recipients-csv.js';
import { AppError, errors, type Problem } from '../../shared/errors.js';
import { toProblems, validatorCompiler } from '../validation.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, str, tenantOf } from './deps.js';
import { number, when } from './format.js';
import { html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, csrfField, doneNotice, errorBox, gate, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';
import { registerUploadRoutes } from './upload.js';

const validate = validatorCompiler({
  schema: BroadcastRequestSchema,
  httpPart: 'body',
  method: 'POST',
  url: '',
}) as unknown as ((data: unknown) => boolean) & { errors?: never[] | null };

/** The API's problems for a request: schema first, then the cross-field rules. */
function problemsOf(req: unknown, allowPrivateUrls: boolean): Problem[] {
  const ok = validate(req);
  return [...(ok ? [] : toProblems(validate.errors ?? [])), ...broadcastProblems(req, { allowPrivateUrls })];
}

function contentOf(body: unknown) {
  if (str(body, 'contentType') === 'template') {
    const values = str(body, 'templateBody')
      .split('\n')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return {
      type: 'template',
      template: {
        name: str(body, 'templateName'),
        language: str(body, 'templateLanguage'),
        components: { body: values },
      },
    };
  }
  return { type: 'text', text: str(body, 'text') };
}

/** The compose form's labels for the API's paths. */
const BROADCAST_LABELS: Record<string, string> = {
  chatAccountId: 'Account',
  content: 'Content',
  'content.text': 'Text',
  'content.template.name': 'Template name',
  'content.template.language': 'Template language',
  'content.template.components.body': 'Template body values',
  recipients: 'Recipients',
};

/** The words a row's problem is shown in: the column the customer wrote, not the API's path (recipients.10.phoneE164). */
function rowProblem(field: string, message: string): string {
  if (field === 'phoneE164')
    return /pattern|format/.test(message)
      ? 'The phone number is not in international form (such as +14155550101).'
      : `The phone number ${message}.`;
  if (field === 'externalId') return `The reference (second column) ${message}.`;
  if (field === '') return `This row ${message}.`;
  return `${field.replace(/([a-z])([A-Z])/g, '$1 $2').replaceAll('.', ' ')} ${message}.`;
}

/** The page's context once the plan allows broadcasts; otherwise the gate page. */
async function allowed(deps: PortalDeps, request: FastifyRequest) {
  const t = await tenantOf(deps, request);
  try {
    deps.broadcasts.checkAllowed(t.caller);
    return { ...t, gated: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ...t, gated: page(t.ctx, 'Broadcasts', gate(t.tenant.plan, 'broadcasts', 'Broadcasts')) };
  }
}

/** The compose form (a viewer sees why not), with `top` above it and `b` the form sent back. */
function composePage(
  ctx: PageContext,
  accounts: { id: string; displayName: string; phoneNumber: string }[],
  top: Part,
  b: unknown = {},
) {
  return page(
    ctx,
    'Broadcasts',
    html`${top}
    ${
      ctx.session.role !== 'owner'
        ? html`<p class="muted">Your role is viewer: you cannot send broadcasts.</p>`
        : html`<form method="post" action="/portal/broadcasts/preview" enctype="multipart/form-data" class="stack">
            ${csrfField(ctx.session)}
            <label for="chatAccountId">Account</label>
            <select id="chatAccountId" name="chatAccountId">
              ${accounts.map((a) => html`<option value="${a.id}">${a.displayName} (${a.phoneNumber})</option>`)}
            </select>
            <fieldset>
              <legend>Content</legend>
              <div>
                <input
                  id="ct-text"
                  type="radio"
                  name="contentType"
                  value="text"
                  ${str(b, 'contentType') !== 'template' ? 'checked' : ''}
                />
                <label for="ct-text">Text</label>
                <input
                  id="ct-template"
                  type="radio"
                  name="contentType"
                  value="template"
                  ${str(b, 'contentType') === 'template' ? 'checked' : ''}
                />
                <label for="ct-template">Template</label>
              </div>
              <label for="text">Text (for a text broadcast)</label>
              <textarea id="text" name="text" rows="3" maxlength="10000">${str(b, 'text')}</textarea>
              <label for="templateName">Template name</label>
              <input id="templateName" name="templateName" value="${str(b, 'templateName')}" />
              <label for="templateLanguage">Template language</label>
              <input id="templateLanguage" name="templateLanguage" value="${str(b, 'templateLanguage') || 'en'}" />
              <label for="templateBody">Template body values, one per line ({{1}}, {{2}}, …)</label>
              <textarea id="templateBody" name="templateBody" rows="2">${str(b, 'templateBody')}</textarea>
            </fieldset>
            <label for="recipients">Recipients: one per line, <code>phone[,externalId]</code></label>
            <textarea id="recipients" name="recipients" rows="6">${str(b, 'recipients')}</textarea>
            <label for="csv">…or a CSV file (phone, optional externalId; a header row is skipped)</label>
            <input id="csv" name="csv" type="file" accept=".csv,text/csv,text/plain" />
            <button type="submit">Check recipients</button>
          </form>`
    }`,
  );
}

/** A broadcast's progress (polled while it is active). */
async function progress(deps: PortalDeps, caller: Caller, id: string, ctx: PageContext) {
  const b = await deps.broadcasts.get(caller, id);
  const done = b.counts.sent + b.counts.delivered + b.counts.read + b.counts.failed;
  return html`<div
    id="progress"
    ${b.status === 'active' ? html`hx-get="/portal/broadcasts/${b.broadcastId}/progress" hx-trigger="every 2s" hx-swap="outerHTML"` : ''}
  >
    <p>Status: <strong class="bstatus">${b.status}</strong> — ${done} of ${b.recipients} processed.</p>
    <progress max="${b.recipients}" value="${done}" aria-label="Broadcast progress">${done}/${b.recipients}</progress>
    <p>
      ${Object.entries(b.counts).map(([s, n]) => html`${s}: ${n} `)}${b.cancelledMessages ? `(cancelled: ${b.cancelledMessages})` : ''}
    </p>
    <p>Created ${when(b.createdAt)}${b.cancelledAt ? html`, cancelled ${when(b.cancelledAt)}` : ''}</p>
    ${
      b.status === 'active' && ctx.session.role === 'owner'
        ? html`<p><a href="/portal/broadcasts/${b.broadcastId}/cancel">Cancel the broadcast…</a></p>`
        : ''
    }
    <p>
      <a href="/portal/messages?${new URLSearchParams({ broadcastId: b.broadcastId }).toString()}"
        >Messages of this broadcast</a
      >
    </p>
  </div>`;
}

type RowCheck = ReturnType<typeof checkRows>;

/** The preview's check: each row with the API's rules; a row with a problem is left out of the send. */
function checkRows(allowPrivateUrls: boolean, body: Record<string, unknown>, rows: RecipientRow[]) {
  const externalId = `portal-${crypto.randomUUID()}`;
  const content = contentOf(body);
  const req = {
    externalId,
    chatAccountId: str(body, 'chatAccountId'),
    content,
    recipients: rows.map(({ line: _l, raw: _r, ...r }) => r),
  };
  const problems = problemsOf(req, allowPrivateUrls);
  const rowProblems = new Map<number, string[]>();
  const general: Problem[] = [];
  for (const p of problems) {
    const m = /^recipients\.(\d+)(?:\.(.*))?$/.exec(p.path);
    if (m) rowProblems.set(Number(m[1]), [...(rowProblems.get(Number(m[1])) ?? []), rowProblem(m[2] ?? '', p.message)]);
    else general.push(p);
  }
  rows.forEach((_r, i) => {
    if (i >= MAX_BROADCAST_RECIPIENTS)
      rowProblems.set(i, [
        ...(rowProblems.get(i) ?? []),
        `over the limit of ${number(MAX_BROADCAST_RECIPIENTS)} recipients per broadcast`,
      ]);
  });
  const good = rows.filter((_r, i) => !rowProblems.has(i));
  return { rows, externalId, content, rowProblems, general, good };
}

/** What the check found, and the form that sends to the good rows. */
function checkedView(session: PageContext['session'], body: Record<string, unknown>, c: RowCheck, remaining: number) {
  const { rows, externalId, content, rowProblems, general, good } = c;
  return html`${general.length > 0 ? errorBox(errors.validation(general), BROADCAST_LABELS) : ''}
    <section aria-labelledby="check-h">
      <h2 id="check-h">Recipients checked</h2>
      <p>
        ${rows.length} row(s): <strong>${good.length} will be sent</strong>, ${rowProblems.size} left out. This
        broadcast would use ${good.length} of your remaining ${number(remaining)} messages this month.
      </p>
      ${
        rowProblems.size > 0
          ? html`<table>
              <caption>
                Rows left out
              </caption>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Phone</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                ${[...rowProblems.entries()].map(
                  ([i, ps]) =>
                    html`<tr class="bad-row">
                      <td>${rows[i]!.line}</td>
                      <td>${rows[i]!.raw}</td>
                      <td>${ps.join('; ')}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : ''
      }
      ${
        good.length > 0 && general.length === 0
          ? html`<form method="post" action="/portal/broadcasts" class="stack">
              ${csrfField(session)}
              <input type="hidden" name="externalId" value="${externalId}" />
              <input type="hidden" name="chatAccountId" value="${str(body, 'chatAccountId')}" />
              <input type="hidden" name="content" value="${JSON.stringify(content)}" />
              <input
                type="hidden"
                name="recipients"
                value="${JSON.stringify(good.map(({ line: _l, raw: _r, ...r }) => r))}"
              />
              <button type="submit">Send to ${good.length} recipient(s)</button>
            </form>`
          : ''
      }
    </section>`;
}

export function registerBroadcastRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/broadcasts', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    return sendPage(reply, composePage(a.ctx, a.tenant.accounts, ''));
  });

  const preview = async (request: FastifyRequest, reply: FastifyReply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const body = request.body as Record<string, unknown>;
    const file = body.csv;
    const text = Buffer.isBuffer(file) && file.length > 0 ? file.toString('utf8') : str(body, 'recipients');
    let rows: RecipientRow[];
    try {
      rows = parseRecipients(text);
    } catch (err) {
      const problem = errors.validation([
        { path: 'recipients', message: `is not readable CSV: ${(err as Error).message}` },
      ]);
      return sendPage(reply, composePage(a.ctx, a.tenant.accounts, errorBox(problem), body), 400);
    }
    const c = checkRows(deps.allowPrivateUrls, body, rows);
    const usage = await deps.usage.get(a.caller);
    const top = checkedView(a.session, body, c, usage.remaining);
    return sendPage(reply, composePage(a.ctx, a.tenant.accounts, top, body));
  };
  // The one route that takes a file (the CSV): multipart is parsed here only (upload.ts).
  registerUploadRoutes(app, (upload) => upload.post('/broadcasts/preview', preview));

  app.post('/broadcasts', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    let req: unknown;
    try {
      req = {
        externalId: str(request.body, 'externalId'),
        chatAccountId: str(request.body, 'chatAccountId') || undefined,
        content: JSON.parse(str(request.body, 'content')),
        recipients: JSON.parse(str(request.body, 'recipients')),
      };
    } catch {
      req = null;
    }
    try {
      deps.broadcasts.checkAllowed(a.caller);
      const problems = problemsOf(req, deps.allowPrivateUrls);
      if (problems.length > 0) throw errors.validation(problems);
      const result = await deps.broadcasts.create(a.caller, req as BroadcastRequest);
      await audit(deps, request, a.session, 'broadcast.create', broadcastWords(req as BroadcastRequest));
      return reply.redirect(`/portal/broadcasts/${result.ack.broadcastId}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, composePage(a.ctx, a.tenant.accounts, errorBox(err)), err.status);
    }
  });

  registerBroadcastPages(app, deps);
}

/** A broadcast in the audit log's words: its external id, its name, how many recipients. */
function broadcastWords(b: { externalId: string; name?: string | null; recipients: number | unknown[] }): string {
  const n = Array.isArray(b.recipients) ? b.recipients.length : b.recipients;
  return `${b.externalId}${b.name ? ` (${b.name})` : ''} to ${n} recipient(s)`;
}

/** One broadcast: its page, its progress (polled), its cancel. */
function registerBroadcastPages(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/broadcasts/:id', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const id = idParam(request);
    const body = await progress(deps, a.caller, id, a.ctx);
    return sendPage(
      reply,
      page(
        a.ctx,
        'Broadcast',
        html`${doneNotice(pageQuery(request), { cancelled: 'Cancelled: messages not yet sent will not be sent.' })}${body}
          <p><a href="/portal/broadcasts/${id}">Reload</a> · <a href="/portal/broadcasts">New broadcast</a></p>`,
      ),
    );
  });

  app.get('/broadcasts/:id/progress', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    return reply.type('text/html; charset=utf-8').send((await progress(deps, a.caller, idParam(request), a.ctx)).value);
  });

  app.get('/broadcasts/:id/cancel', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const b = await deps.broadcasts.get(a.caller, idParam(request));
    return sendPage(
      reply,
      confirmPage(
        a.ctx,
        'Cancel a broadcast',
        html`<p>
          Cancel this broadcast to ${b.recipients} recipient(s)? Messages not yet sent will not be sent; this cannot be
          undone.
        </p>`,
        `/portal/broadcasts/${b.broadcastId}/cancel`,
        'Cancel the broadcast',
        `/portal/broadcasts/${b.broadcastId}`,
      ),
    );
  });

  app.post('/broadcasts/:id/cancel', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    await deps.broadcasts.cancel(a.caller, id);
    await audit(deps, request, a.session, 'broadcast.cancel', broadcastWords(await deps.broadcasts.get(a.caller, id)));
    return reply.redirect(`/portal/broadcasts/${id}?done=cancelled`, 303);
  });
}
