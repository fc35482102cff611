// Inbox (plan Pro): inbound messages with filters, the sender lookup of one number, each
// account's whitelist/blacklist, and forwarding rules with a "does this sample match" check.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Condition } from '../../inbound/forwarding-match.js';
import { AppError, errors } from '../../shared/errors.js';
import { createRateWindow } from '../../shared/rate-window.js';
import { conversationLink, inboundContent } from './content-view.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, str, tenantOf } from './deps.js';
import { parseWhen, when } from './format.js';
import { type Html, html, type Part } from './html.js';
import {
  CONDITIONS,
  type FilterDraft,
  filterForms,
  type RuleForm,
  rulesSection,
  senderFields,
  senderLookup,
} from './inbox-views.js';
import { type PageQuery, pageQuery } from './input.js';
import { canWrite, confirmPage, doneNotice, errorBox, page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';
import { dataTable, nextPageLink } from './tables.js';

/** Sample checks per user (each may cost the rule matcher's worker up to its time budget). */
export const RULE_CHECKS_PER_MINUTE = 30;

const checkThrottled = (seconds: number) =>
  new AppError(429, 'check_throttled', {
    message: `at most ${RULE_CHECKS_PER_MINUTE} checks a minute; try again in ${seconds} s`,
  });

function conditionOf(body: unknown): Condition {
  const type = str(body, 'conditionType') as Condition['type'];
  if (!(CONDITIONS as readonly string[]).includes(type))
    throw errors.validation([{ path: 'condition.type', message: `must be one of ${CONDITIONS.join(', ')}` }]);
  return { type, pattern: str(body, 'pattern'), caseSensitive: str(body, 'caseSensitive') === 'true' };
}

/** The live check's answer: does a sample text match the condition (the rule engine's own matcher)? */
function sampleAnswer(r: { matched: boolean; exceeded: boolean }): Html {
  const says = r.exceeded
    ? 'The check ran out of its time budget: inbound messages like this sample would not be forwarded.'
    : r.matched
      ? 'The sample matches this rule.'
      : 'The sample does not match this rule.';
  return html`<p role="status" class="match">${says}</p>`;
}

type InboundPage = Awaited<ReturnType<PortalDeps['senders']['inbox']>>;

/** The inbox list's loader: the page of inbound messages the query selects, or why there is none. */
async function inboxList(deps: PortalDeps, caller: Caller, q: PageQuery): Promise<Part> {
  try {
    const r = await deps.senders.inbox(caller, {
      chatAccountId: q.chatAccountId || undefined,
      from: q.from || undefined,
      since: parseWhen(q.since, 'since'),
      until: parseWhen(q.until, 'until'),
      limit: 50,
      cursor: q.cursor || undefined,
    });
    return inboxTable(
      r.inboundMessages,
      nextPageLink('/portal/inbox', { ...q } as Record<string, string>, r.nextCursor),
    );
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return errorBox(err);
  }
}

/** The inbox list's view. */
function inboxTable(messages: InboundPage['inboundMessages'], next: Part): Html {
  return html`${dataTable(
    'Inbound messages, newest first',
    ['Received', 'From', 'Type', 'Content'],
    messages.map(
      (m) =>
        html`<tr>
          <td><a href="/portal/inbox/${m.inboundMessageId}">${when(m.receivedAt)}</a></td>
          <td>${m.from ?? '—'} ${m.fromDisplayName} ${conversationLink(m.chatAccountId, m.from)}</td>
          <td>${m.messageType}</td>
          <td>${inboundContent(m)}</td>
        </tr>`,
    ),
  )}
  ${next}`;
}

/** The inbox's settings (filters, forwarding rules): their own area, inside a page every role reads (roles.ts). */
const RULES = { config: { portalArea: 'inbox-rules' as const } };

async function inboxPage(
  deps: PortalDeps,
  request: FastifyRequest,
  ctx: PageContext,
  caller: Caller,
  top: Part,
  draft: FilterDraft | null = null,
  form?: RuleForm,
) {
  const { tenant } = caller;
  const q = pageQuery(request);
  const list = await inboxList(deps, caller, q);
  const [rules, filters] = await Promise.all([
    deps.settings.listRules(caller),
    Promise.all(tenant.accounts.map((a) => deps.settings.getFilter(caller, a.id))),
  ]);
  const owner = canWrite(ctx, 'inbox-rules');
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
      ${list} ${senderLookup(accountOptions)} ${filterForms(ctx, tenant, filters, owner, draft)}
      ${rulesSection(ctx, rules, owner, form)}`,
  );
}

export function registerInboxRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/inbox', async (request, reply) => {
    const a = await tenantOf(deps, request);
    const done = doneNotice(pageQuery(request), {
      'rule-created': 'Rule created.',
      'rule-deleted': 'Rule deleted.',
      'filter-saved': 'Filter saved.',
    });
    return sendPage(reply, await inboxPage(deps, request, a.ctx, a.caller, done));
  });

  // The sender aggregate is on every plan (GET /inbound-senders/{phone}); shown here with the inbox.
  app.get('/inbox/sender', async (request, reply) => {
    const { caller, ctx, tenant } = await tenantOf(deps, request);
    const q = pageQuery(request);
    let body: Part;
    try {
      // The form always names the account: an empty one is not found (never "the only account").
      const s = await deps.senders.lookupOne(caller, q.phone ?? '', q.chatAccountId ?? '');
      body = senderFields(s, tenant);
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

  // Owners only (the portal's read-only answer for viewers), throttled per user.
  registerFilterRoutes(app, deps);
  registerRuleRoutes(app, deps);
}

/** Saving an account's whitelist/blacklist (a refused one comes back with what was typed). */
function registerFilterRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.post('/inbox/filters/:id', RULES, async (request, reply) => {
    const a = await tenantOf(deps, request);
    // The account and the numbers are the settings service's to check (the API's rule: 404 when
    // not the caller's account, `numbers.K` for a number it cannot read); the form only splits
    // the field, one number per line (a line may also hold several, separated by commas), so that
    // a problem is named by the line the customer typed it on.
    const accountId = idParam(request).toLowerCase();
    const mode = str(request.body, 'mode');
    const typed = str(request.body, 'numbers');
    const refuse = async (field: 'mode' | 'numbers', text: string) =>
      sendPage(
        reply,
        await inboxPage(deps, request, a.ctx, a.caller, '', {
          accountId,
          mode,
          numbers: typed,
          problem: { field, text },
        }),
        400,
      );
    if (!['off', 'whitelist', 'blacklist'].includes(mode)) return refuse('mode', 'Choose off, whitelist or blacklist.');
    const parts = typed
      .split(/\r?\n/)
      .flatMap((line, i) => line.split(',').map((p) => ({ value: p.trim(), line: i + 1 })))
      .filter((p) => p.value !== '');
    try {
      await deps.settings.setFilter(
        a.caller,
        accountId,
        mode,
        parts.map((p) => p.value),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      const detail = (err.body().details as { path: string; message: string }[] | undefined)?.[0];
      const part = detail ? parts[Number(/^numbers\.(\d+)$/.exec(detail.path)?.[1] ?? NaN)] : undefined;
      if (detail && part)
        return refuse(
          'numbers',
          `Line ${part.line}: “${part.value.slice(0, 40)}” ${detail.message}. Write it in international form, such as +14155550101${a.tenant.defaultCountry ? ', or as a national number' : ''}.`,
        );
      const message = typeof err.body().message === 'string' ? (err.body().message as string) : undefined;
      return refuse('numbers', detail?.message ?? message ?? 'These numbers could not be saved.');
    }
    const account = a.tenant.accounts.find((x) => x.id === accountId);
    const filterWords = `${account ? `${account.displayName} (${account.phoneNumber})` : accountId}: ${mode}, ${parts.length} number(s)`;
    await audit(deps, request, a.session, 'inbox.filter_save', filterWords);
    return reply.redirect('/portal/inbox?done=filter-saved', 303);
  });
}

/** A forwarding rule in the audit log's words: its name and where it forwards. */
function ruleWords(rule: { name: string | null; destination: { url: string } }): string {
  return `${rule.name || '(no name)'} → ${rule.destination.url}`;
}

/** Forwarding rules: the sample check (throttled per user), create, delete. */
function registerRuleRoutes(app: FastifyInstance, deps: PortalDeps): void {
  const checks = createRateWindow({ limit: RULE_CHECKS_PER_MINUTE, windowMs: 60_000 });

  app.post('/inbox/rules/check', RULES, async (request, reply) => {
    const a = await tenantOf(deps, request);
    const fragment = request.headers['hx-request'] === 'true';
    let answer: Html;
    let form: RuleForm | undefined;
    let status = 200;
    try {
      const wait = checks.take(a.ctx.session.userId);
      if (wait !== null) {
        void reply.header('retry-after', String(wait));
        throw checkThrottled(wait);
      }
      answer = sampleAnswer(
        await deps.settings.checkSample(
          a.caller.tenant.customerId,
          conditionOf(request.body),
          str(request.body, 'sample'),
        ),
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      answer = errorBox(err);
      form = { body: request.body, err };
      status = err.status;
    }
    // htmx swaps only 2xx answers: the fragment carries the refusal in its text instead.
    if (fragment) return reply.type('text/html; charset=utf-8').send(answer.value);
    return sendPage(reply, await inboxPage(deps, request, a.ctx, a.caller, answer, null, form), status);
  });

  app.post('/inbox/rules', RULES, async (request, reply) => {
    const a = await tenantOf(deps, request);
    try {
      const rule = await deps.settings.createRule(a.caller, {
        name: str(request.body, 'name').slice(0, 200),
        condition: conditionOf(request.body),
        destination: { type: 'http', url: str(request.body, 'url') },
      });
      await audit(deps, request, a.session, 'inbox.rule_create', ruleWords(rule));
      // Post/redirect/get: a reload must not create the rule (and forward every match) twice.
      return reply.redirect('/portal/inbox?done=rule-created', 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const form = { body: request.body, err };
      return sendPage(reply, await inboxPage(deps, request, a.ctx, a.caller, errorBox(err), null, form), err.status);
    }
  });

  app.get('/inbox/rules/:id/delete', RULES, async (request, reply) => {
    const a = await tenantOf(deps, request);
    const id = idParam(request);
    const rule = (await deps.settings.listRules(a.caller)).find((r) => r.id === id);
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

  app.post('/inbox/rules/:id/delete', RULES, async (request, reply) => {
    const a = await tenantOf(deps, request);
    const id = idParam(request);
    const rule = (await deps.settings.listRules(a.caller)).find((r) => r.id === id);
    await deps.settings.deleteRule(a.caller, id);
    if (rule) await audit(deps, request, a.session, 'inbox.rule_delete', ruleWords(rule));
    return reply.redirect('/portal/inbox?done=rule-deleted', 303);
  });
}
