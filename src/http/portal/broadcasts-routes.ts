// Broadcasts (plans Basic and Pro; decision 0049): the list (name, account, created, progress,
// status), the compose form (broadcast-compose.ts) with recipients pasted or uploaded as CSV and
// every row checked by POST /messages/broadcast's own rules before sending (broadcast-check.ts),
// one broadcast's page (account, content, schedule, progress polled while it runs), cancel.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { BroadcastRequest } from '../../broadcasts/broadcast-request.js';
import { parseRecipients, type RecipientRow } from '../../portal/recipients-csv.js';
import { AppError, errors } from '../../shared/errors.js';
import { findInputProblem } from '../input-guard.js';
import { BROADCAST_LABELS, checkedView, checkRows, problemsOf, sendAtFormProblem } from './broadcast-check.js';
import { type Catalog, composePage, loadCatalog } from './broadcast-compose.js';
import { columnsOf, firstRecipients, mappingStep, rolesOf } from './broadcast-mapping.js';
import { broadcastFields, broadcastList, progressBlock } from './broadcast-views.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, str, tenantOf } from './deps.js';
import { html } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, doneNotice, errorBox, gate, page } from './layout.js';
import { sendPage } from './reply.js';
import { registerUploadRoutes } from './upload.js';

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

type Allowed = Awaited<ReturnType<typeof allowed>>;

/** The compose page with the catalog read for it. */
async function compose(deps: PortalDeps, a: Allowed, top: Parameters<typeof composePage>[3], body: unknown = {}) {
  const catalog: Catalog =
    a.session.role === 'owner' ? await loadCatalog(deps, a.caller, a.tenant) : { templates: [], problems: [] };
  return { catalog, page: composePage(a.ctx, a.tenant, catalog, top, body) };
}

/** The recipients of the form: the uploaded file, else the pasted text. */
function recipientsText(body: Record<string, unknown>): string {
  const file = body.csv;
  return Buffer.isBuffer(file) && file.length > 0 ? file.toString('utf8') : str(body, 'recipients');
}

/** The compose form's fields for a request that was refused, so it can be corrected and checked again. */
function formOf(req: unknown): Record<string, string> {
  if (typeof req !== 'object' || req === null) return {};
  const r = req as Partial<BroadcastRequest>;
  const recipients = Array.isArray(r.recipients) ? r.recipients : [];
  return {
    name: typeof r.name === 'string' ? r.name : '',
    chatAccountId: typeof r.chatAccountId === 'string' ? r.chatAccountId : '',
    sendAt: typeof r.sendAt === 'string' ? r.sendAt.slice(0, 16) : '',
    contentType: r.content?.type === 'template' ? 'template' : 'text',
    text: typeof r.content?.text === 'string' ? r.content.text : '',
    recipients: recipients
      .map((x) => [x.phoneE164, x.externalId, ...(x.components?.body ?? [])].filter(Boolean).join(','))
      .join('\n'),
  };
}

export function registerBroadcastRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/broadcasts', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const cursor = pageQuery(request).cursor;
    const { broadcasts, nextCursor } = await deps.broadcasts.list(a.caller, {
      limit: 25,
      ...(cursor ? { cursor } : {}),
    });
    return sendPage(reply, page(a.ctx, 'Broadcasts', broadcastList(a.ctx, a.tenant, broadcasts, nextCursor)));
  });

  app.get('/broadcasts/new', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    return sendPage(reply, (await compose(deps, a, '')).page);
  });

  // "Check recipients" and the template picker's "Show the template's variables": both answer the
  // form again, and change nothing (the check shows what would be sent and the button that sends).
  const preview = async (request: FastifyRequest, reply: FastifyReply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const body = request.body as Record<string, unknown>;
    if (str(body, 'step') === 'pick')
      return sendPage(reply, (await compose(deps, a, '', { ...body, contentType: 'template' })).page);
    let rows: RecipientRow[];
    // An uploaded file's text goes into the recipients field, so a check with another column mapping reads it again.
    const text = recipientsText(body);
    const form = { ...body, recipients: text };
    const columns = columnsOf(text);
    const roles = rolesOf(body, columns);
    try {
      if (findInputProblem(text, '')) throw new Error('it must not contain NUL characters');
      rows = parseRecipients(text, roles);
    } catch (err) {
      const problem = errors.validation([
        { path: 'recipients', message: `is not readable CSV: ${(err as Error).message}` },
      ]);
      const top = html`${errorBox(problem)} ${mappingStep(columns, roles)}`;
      return sendPage(reply, (await compose(deps, a, top, form)).page, 400);
    }
    const catalog = await loadCatalog(deps, a.caller, a.tenant);
    const c = checkRows(a.tenant.plan, deps.allowPrivateUrls, body, catalog, rows);
    const usage = await deps.usage.get(a.caller);
    const top = html`${checkedView(a.session, c, usage.remaining)} ${firstRecipients(c.good)}
    ${mappingStep(columns, roles)}`;
    return sendPage(reply, composePage(a.ctx, a.tenant, catalog, top, form));
  };
  // The one route that takes a file (the CSV): multipart is parsed here only (upload.ts).
  registerUploadRoutes(app, '/portal/broadcasts/new', (upload) => upload.post('/broadcasts/preview', preview));

  // Sends what the check showed. The request carries the externalId the check chose, so sending
  // the same form again (a reload, Back and send) repeats it: the API answers the same broadcast.
  app.post('/broadcasts', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    let req: unknown;
    try {
      req = JSON.parse(str(request.body, 'request'));
    } catch {
      req = null;
    }
    try {
      deps.broadcasts.checkAllowed(a.caller);
      // The form's `request` field is JSON parsed here: the input guard looks at what it holds.
      const unstorable = findInputProblem(req, '');
      const problems = unstorable ? [unstorable] : problemsOf(req, deps.allowPrivateUrls);
      // A send time the check passed may have run out meanwhile: the same bound, in the same words.
      const sendAt = (req as { sendAt?: unknown } | null)?.sendAt;
      const late = typeof sendAt === 'string' && sendAt !== '' ? sendAtFormProblem(a.tenant.plan, sendAt) : null;
      if (late && !problems.some((p) => p.path === 'sendAt')) problems.push(late);
      if (problems.length > 0) throw errors.validation(problems);
      const result = await deps.broadcasts.create(a.caller, req as BroadcastRequest);
      // A repeat of the same form (Back and send again, a double click) is the same broadcast: audited once.
      if (result.created)
        await audit(deps, request, a.session, 'broadcast.create', broadcastWords(req as BroadcastRequest));
      return reply.redirect(`/portal/broadcasts/${result.ack.broadcastId}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, (await compose(deps, a, errorBox(err, BROADCAST_LABELS), formOf(req))).page, err.status);
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
    const b = await deps.broadcasts.get(a.caller, idParam(request));
    const [content, own] = await Promise.all([
      deps.queries.broadcastContent(a.tenant.customerId, b.broadcastId),
      deps.queries.broadcastValues(a.tenant.customerId, b.broadcastId),
    ]);
    return sendPage(
      reply,
      page(
        a.ctx,
        b.name ? `Broadcast ${b.name}` : 'Broadcast',
        html`${doneNotice(pageQuery(request), { cancelled: 'Cancelled: messages not yet sent will not be sent.' })}
          ${broadcastFields(a.tenant, b, content, own)} ${progressBlock(a.ctx, b)}
          <p>
            <a href="/portal/broadcasts/${b.broadcastId}">Reload</a> · <a href="/portal/broadcasts">All broadcasts</a>
            ${a.session.role === 'owner' ? html` · <a href="/portal/broadcasts/new">New broadcast</a>` : ''}
          </p>`,
      ),
    );
  });

  app.get('/broadcasts/:id/progress', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const b = await deps.broadcasts.get(a.caller, idParam(request));
    return reply.type('text/html; charset=utf-8').send(progressBlock(a.ctx, b).value);
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
