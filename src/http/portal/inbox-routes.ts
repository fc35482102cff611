// Inbox (plan Pro): inbound messages with filters, the sender lookup of one number, each
// account's whitelist/blacklist, and forwarding rules with a "does this sample match" check.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Tenant } from '../../auth/directory.js';
import { matches } from '../../inbound/forwarding-match.js';
import { checkPattern, type Condition } from '../../inbound/forwarding-match.js';
import { requireFeature } from '../../plans/plans.js';
import { normalizePhone } from '../../senders/phone.js';
import { AppError, errors } from '../../shared/errors.js';
import type { PortalDeps } from './deps.js';
import { idParam, str, tenantOf } from './deps.js';
import { parseWhen, when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { confirmPage, csrfField, doneNotice, errorBox, gate, page, type PageContext } from './layout.js';
import { sendPage } from './portal-plugin.js';

const CONDITIONS = ['contains', 'starts_with', 'regex'] as const;

function phoneOf(tenant: Tenant, value: string, path: string): string {
  const e164 = normalizePhone(value, tenant.defaultCountry);
  if (!e164)
    throw errors.validation([{ path, message: 'must be a phone number (E.164, or national with a default country)' }]);
  return e164;
}

function accountOf(tenant: Tenant, id: string): string {
  const account = tenant.accounts.find((a) => a.id === id.toLowerCase());
  if (!account) throw errors.accountNotFound();
  return account.id;
}

function conditionOf(body: unknown): Condition {
  const type = str(body, 'conditionType') as Condition['type'];
  if (!(CONDITIONS as readonly string[]).includes(type))
    throw errors.validation([{ path: 'condition.type', message: `must be one of ${CONDITIONS.join(', ')}` }]);
  return { type, pattern: str(body, 'pattern'), caseSensitive: str(body, 'caseSensitive') === 'true' };
}

/** The live check: does a sample text match the condition (the rule engine's own function)? */
function sampleResult(body: unknown): Html {
  try {
    const c = conditionOf(body);
    const reason = checkPattern(c);
    if (reason) return errorBox(errors.validation([{ path: 'condition.pattern', message: reason }]));
    const hit = matches(c, str(body, 'sample'));
    return html`<p role="status" class="match">
      ${hit ? 'The sample matches this rule.' : 'The sample does not match this rule.'}
    </p>`;
  } catch (err) {
    return errorBox(err);
  }
}

export function registerInboxRoutes(app: FastifyInstance, deps: PortalDeps): void {
  async function allowed(request: FastifyRequest) {
    const t = await tenantOf(deps, request);
    try {
      requireFeature(t.tenant.plan, 'inbox');
      return { ...t, gated: null };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { ...t, gated: page(t.ctx, 'Inbox', gate(t.tenant.plan, 'inbox', 'The inbox')) };
    }
  }

  /** A filter form sent back with a problem: what was typed, and the problem beside its field. */
  type FilterDraft = {
    accountId: string;
    mode: string;
    numbers: string;
    problem: { field: 'mode' | 'numbers'; text: string };
  };

  async function inboxPage(
    request: FastifyRequest,
    ctx: PageContext,
    tenant: Tenant,
    top: Part,
    draft: FilterDraft | null = null,
  ) {
    const q = request.query as Record<string, string | undefined>;
    let list: Part;
    try {
      const from = q.from ? phoneOf(tenant, q.from, 'from') : undefined;
      const accountId = q.chatAccountId ? accountOf(tenant, q.chatAccountId) : null;
      const since = parseWhen(q.since, 'since');
      const until = parseWhen(q.until, 'until');
      const r = await deps.senders.inbox(
        { customerId: tenant.customerId, accountId },
        { from, since, until, limit: 50, cursor: q.cursor || undefined },
      );
      list = html`<table>
          <caption>
            Inbound messages, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">From</th>
              <th scope="col">Type</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <tbody>
            ${r.inboundMessages.map(
              (m) =>
                html`<tr>
                  <td>${when(m.receivedAt)}</td>
                  <td>${m.from ?? '—'} ${m.fromDisplayName}</td>
                  <td>${m.messageType}</td>
                  <td>${m.text ?? ''}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${r.nextCursor ? html`<p><a href="/portal/inbox?${new URLSearchParams({ ...(q as Record<string, string>), cursor: r.nextCursor }).toString()}">Next page</a></p>` : ''}`;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      list = errorBox(err);
    }
    const [rules, filters] = await Promise.all([
      deps.settings.listRules(tenant.customerId),
      Promise.all(tenant.accounts.map((a) => deps.settings.getFilter(tenant.customerId, a.id))),
    ]);
    const owner = ctx.session.role === 'owner';
    const accountOptions = tenant.accounts.map(
      (a) => html`<option value="${a.id}">${a.displayName} (${a.phoneNumber})</option>`,
    );
    return page(
      ctx,
      'Inbox',
      html`${top}
        <form method="get" action="/portal/inbox" class="filters">
          <div><label for="from">From</label><input id="from" name="from" value="${q.from ?? ''}" /></div>
          <div>
            <label for="f-acc">Account</label>
            <select id="f-acc" name="chatAccountId">
              <option value="">any</option>
              ${accountOptions}
            </select>
          </div>
          <div>
            <label for="since">Since (UTC)</label
            ><input id="since" name="since" type="datetime-local" value="${q.since ?? ''}" />
          </div>
          <div>
            <label for="until">Until (UTC)</label
            ><input id="until" name="until" type="datetime-local" value="${q.until ?? ''}" />
          </div>
          <button type="submit">Filter</button>
        </form>
        ${list}
        <section aria-labelledby="lookup-h">
          <h2 id="lookup-h">Has this number written to me?</h2>
          <form method="get" action="/portal/inbox/sender" class="filters">
            <div><label for="phone">Phone</label><input id="phone" name="phone" required /></div>
            <div>
              <label for="l-acc">Account</label>
              <select id="l-acc" name="chatAccountId">
                ${accountOptions}
              </select>
            </div>
            <button type="submit">Look up</button>
          </form>
        </section>
        <section aria-labelledby="filter-h">
          <h2 id="filter-h">Inbox whitelist / blacklist</h2>
          ${filters.map((f, i) => {
            const a = tenant.accounts[i]!;
            // A form sent back with a problem keeps what was typed, the problem beside its field.
            const d = draft?.accountId === a.id ? draft : null;
            const mode = d ? d.mode : f.mode;
            const fieldError = (field: 'mode' | 'numbers') =>
              d?.problem.field === field
                ? html`<p class="field-error" id="${field}-${i}-error" role="alert">${d.problem.text}</p>`
                : '';
            const invalid = (field: 'mode' | 'numbers') =>
              d?.problem.field === field ? html`aria-invalid="true" aria-describedby="${field}-${i}-error"` : '';
            return html`<form method="post" action="/portal/inbox/filters/${a.id}" class="stack">
              ${csrfField(ctx.session)}
              <h3>${a.displayName} (${a.phoneNumber})</h3>
              <label for="mode-${i}">Mode</label>
              <select id="mode-${i}" name="mode" ${owner ? '' : 'disabled'} ${invalid('mode')}>
                ${['off', 'whitelist', 'blacklist'].map((m) => html`<option value="${m}" ${mode === m ? 'selected' : ''}>${m}</option>`)}
              </select>
              ${fieldError('mode')}
              <label for="numbers-${i}">Numbers, one per line</label>
              <textarea id="numbers-${i}" name="numbers" rows="3" ${owner ? '' : 'readonly'} ${invalid('numbers')}>
${d ? d.numbers : f.numbers.join('\n')}</textarea>
              ${fieldError('numbers')} ${owner ? html`<button type="submit">Save filter</button>` : ''}
            </form>`;
          })}
        </section>
        <section aria-labelledby="rules-h">
          <h2 id="rules-h">Forwarding rules</h2>
          <ul>
            ${rules.map(
              (r) =>
                html`<li>
                  <strong>${r.name || '(no name)'}</strong>: ${r.condition.type} <code>${r.condition.pattern}</code> →
                  ${r.destination.url} ${r.isActive ? '' : '(inactive)'}
                  ${owner ? html`<a href="/portal/inbox/rules/${r.id}/delete">Delete…</a>` : ''}
                </li>`,
            )}
          </ul>
          <form method="post" action="/portal/inbox/rules" class="stack" id="rule-form">
            ${csrfField(ctx.session)}
            <label for="r-name">Name</label><input id="r-name" name="name" maxlength="200" />
            <label for="r-type">Condition</label>
            <select id="r-type" name="conditionType">
              ${CONDITIONS.map((c) => html`<option value="${c}">${c}</option>`)}
            </select>
            <label for="r-pattern">Pattern</label><input id="r-pattern" name="pattern" required maxlength="500" />
            <div>
              <input id="r-case" type="checkbox" name="caseSensitive" value="true" /><label for="r-case"
                >Case sensitive</label
              >
            </div>
            <label for="r-url">Destination URL (POSTed each matching message)</label
            ><input id="r-url" name="url" type="url" />
            <label for="r-sample">Sample text to check</label>
            <input
              id="r-sample"
              name="sample"
              hx-post="/portal/inbox/rules/check"
              hx-trigger="input changed delay:300ms"
              hx-include="#rule-form"
              hx-target="#sample-result"
            />
            <div id="sample-result" aria-live="polite"></div>
            <button type="submit" formaction="/portal/inbox/rules/check">Check the sample</button>
            ${owner ? html`<button type="submit">Create rule</button>` : ''}
          </form>
        </section>`,
    );
  }

  app.get('/inbox', async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated);
    const done = doneNotice(request.query, {
      'rule-created': 'Rule created.',
      'rule-deleted': 'Rule deleted.',
      'filter-saved': 'Filter saved.',
    });
    return sendPage(reply, await inboxPage(request, a.ctx, a.tenant, done));
  });

  // The sender aggregate is on every plan (GET /inbound-senders/{phone}); shown here with the inbox.
  app.get('/inbox/sender', async (request, reply) => {
    const { tenant, ctx } = await tenantOf(deps, request);
    const q = request.query as Record<string, string | undefined>;
    let body: Part;
    try {
      const phone = phoneOf(tenant, q.phone ?? '', 'phone');
      const accountId = accountOf(tenant, q.chatAccountId ?? '');
      const [s] = await deps.senders.lookup(tenant.customerId, accountId, [phone], false);
      body = html`<dl class="fields">
        ${Object.entries(s ?? {}).map(
          ([k, v]) =>
            html`<dt>${k}</dt>
              <dd>${v === null ? 'null' : String(v)}</dd>`,
        )}
      </dl>`;
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      body = errorBox(err);
    }
    return sendPage(
      reply,
      page(
        ctx,
        'Sender lookup',
        html`${body}
          <p><a href="/portal/inbox">Back to the inbox</a></p>`,
      ),
    );
  });

  app.post('/inbox/rules/check', { config: { portalViewerMayPost: true } }, async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    if (request.headers['hx-request'] === 'true')
      return reply.type('text/html; charset=utf-8').send(sampleResult(request.body).value);
    return sendPage(reply, await inboxPage(request, a.ctx, a.tenant, sampleResult(request.body)));
  });

  app.post('/inbox/rules', async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    try {
      await deps.settings.createRule(a.tenant.customerId, {
        name: str(request.body, 'name').slice(0, 200),
        condition: conditionOf(request.body),
        destination: { type: 'http', url: str(request.body, 'url') },
      });
      // Post/redirect/get: a reload must not create the rule (and forward every match) twice.
      return reply.redirect('/portal/inbox?done=rule-created', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, await inboxPage(request, a.ctx, a.tenant, errorBox(err)), err.status);
    }
  });

  app.get('/inbox/rules/:id/delete', async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated);
    const id = idParam(request);
    const rule = (await deps.settings.listRules(a.tenant.customerId)).find((r) => r.id === id);
    if (!rule) throw errors.notFound();
    return sendPage(
      reply,
      confirmPage(
        a.ctx,
        'Delete a forwarding rule',
        html`<p>
          Delete the rule <strong>${rule.name || '(no name)'}</strong> (${rule.condition.type}
          <code>${rule.condition.pattern}</code> → ${rule.destination.url})? Matching messages are no longer forwarded.
        </p>`,
        `/portal/inbox/rules/${rule.id}/delete`,
        'Delete the rule',
        '/portal/inbox',
      ),
    );
  });

  app.post('/inbox/rules/:id/delete', async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    await deps.settings.deleteRule(a.tenant.customerId, idParam(request));
    return reply.redirect('/portal/inbox?done=rule-deleted', 303);
  });

  app.post('/inbox/filters/:id', async (request, reply) => {
    const a = await allowed(request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const accountId = accountOf(a.tenant, idParam(request));
    const mode = str(request.body, 'mode');
    const typed = str(request.body, 'numbers');
    const refuse = async (field: 'mode' | 'numbers', text: string) =>
      sendPage(
        reply,
        await inboxPage(request, a.ctx, a.tenant, '', { accountId, mode, numbers: typed, problem: { field, text } }),
        400,
      );
    if (!['off', 'whitelist', 'blacklist'].includes(mode)) return refuse('mode', 'Choose off, whitelist or blacklist.');
    // One number per line (a line may also hold several, separated by commas); spaces inside a
    // number are fine. A problem names its line, as the customer sees the field.
    const numbers: string[] = [];
    const lines = typed.split(/\r?\n/);
    for (const [i, line] of lines.entries()) {
      for (const part of line.split(',').map((p) => p.trim())) {
        if (part === '') continue;
        const e164 = normalizePhone(part, a.tenant.defaultCountry);
        if (!e164)
          return refuse(
            'numbers',
            `Line ${i + 1}: “${part.slice(0, 40)}” is not a phone number. Write it in international form, such as +14155550101${a.tenant.defaultCountry ? ', or as a national number' : ''}.`,
          );
        numbers.push(e164);
      }
    }
    try {
      await deps.settings.setFilter(a.tenant.customerId, accountId, mode, numbers);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      const detail = (err.body().details as { message: string }[] | undefined)?.[0]?.message;
      const message = typeof err.body().message === 'string' ? (err.body().message as string) : undefined;
      return refuse('numbers', detail ?? message ?? 'These numbers could not be saved.');
    }
    return reply.redirect('/portal/inbox?done=filter-saved', 303);
  });
}
