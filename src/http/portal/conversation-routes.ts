// One number's conversation on an account (decision 0039): its inbound and our outbound messages
// in time order, a page at a time (newest page first), and a reply box for owners that sends
// through the API's send service: free text while the 24-hour reply window is open, one of the
// account's approved templates outside it. Also the page of one inbound message.
import crypto from 'node:crypto';

import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import { PROVIDER_TEXT_MAX } from '../../messages/content-kinds.js';
import { crossFieldProblems, type SendRequest, SendRequestSchema } from '../../messages/send-request.js';
import { roleName } from '../../portal/roles.js';
import { isReplyWindowOpen } from '../../senders/reply-window.js';
import { REPLY_WINDOW_MS } from '../../senders/reply-window.js';
import { AppError, errors } from '../../shared/errors.js';
import { filledTemplate } from '../../templates/template-send.js';
import type { Template } from '../../templates/template-view.js';
import { toProblems, validatorCompiler } from '../validation.js';
import {
  conversationLink,
  conversationPath,
  inboundContent,
  inboundDetail,
  outboundContent,
  referralPart,
} from './content-view.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, str, tenantOf } from './deps.js';
import { number, when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { pageQuery } from './input.js';
import { canWrite, csrfField, doneNotice, errorBox, gate, page, type PageContext, sandboxBadge } from './layout.js';
import { errorLine } from './message-page.js';
import { sendPage } from './reply.js';

const validate = validatorCompiler({
  schema: SendRequestSchema,
  httpPart: 'body',
  method: 'POST',
  url: '',
}) as unknown as ((data: unknown) => boolean) & { errors?: never[] | null };

/** The API's labels of a reply's fields, as the form names them. */
const LABELS: Record<string, string> = {
  'content.text': 'Reply',
  'content.template.name': 'Template',
  'content.template.language': 'Template',
  'content.template.components.body': 'Template variables',
};

type Conversation = Awaited<ReturnType<PortalDeps['conversations']['read']>>;

/**
 * What a refused reply form said, shown again with the problem beside its field; a template
 * asked to be previewed (`err` null) is shown again the same way, with its preview.
 */
type Draft = {
  kind: string;
  text: string;
  template: string;
  variables: string;
  externalId: string;
  err: AppError | null;
};

const windowClosed = () =>
  new AppError(409, 'reply_window_closed', {
    message:
      'The 24-hour reply window is closed: this number has not written in the last 24 hours. Send an approved template instead.',
  });

/** The account and number of the path: anything that is not the caller's is simply not found. */
function pathOf(request: FastifyRequest): { accountId: string; phone: string } {
  return { accountId: idParam(request, 'accountId'), phone: (request.params as { phone?: string }).phone ?? '' };
}

/** The approved templates of an account, or why there are none to offer. */
async function approvedTemplates(deps: PortalDeps, caller: Caller, accountId: string): Promise<Template[] | Html> {
  if (!deps.templates.catalogAllowed(caller))
    return gate(caller.tenant.plan, 'templates', 'Sending templates from here');
  try {
    const { templates } = await deps.templates.list(caller, accountId, { status: 'APPROVED', limit: 100 });
    return templates.filter((t) => t.status === 'APPROVED');
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return errorBox(err);
  }
}

function itemsView(c: Conversation): Html {
  if (c.items.length === 0) return html`<p>No messages with this number yet.</p>`;
  // A page is newest first; it reads top to bottom in time order, like a chat.
  return html`<ol class="conversation" aria-label="Messages, oldest at the top">
    ${[...c.items].reverse().map((item) =>
      item.direction === 'in'
        ? html`<li class="in" data-kind="${item.inbound.messageType}">
            <p class="meta">
              <a href="/portal/inbox/${item.id}"><time datetime="${item.at}">${when(item.at)}</time></a>
              received (${item.inbound.messageType})
            </p>
            <p class="body">${inboundContent(item.inbound)}</p>
          </li>`
        : html`<li class="out" data-status="${item.message.status}">
            <p class="meta">
              <a href="/portal/messages/${item.id}"><time datetime="${item.at}">${when(item.at)}</time></a>
              sent by us, ${item.message.status} ${item.message.sandbox ? sandboxBadge(true) : ''}
            </p>
            <p class="body">${outboundContent(item.content)}</p>
            ${
              item.message.status === 'failed' && item.message.error
                ? html`<p class="failure">Not delivered: ${errorLine(item.message.error)}.</p>`
                : ''
            }
          </li>`,
    )}
  </ol>`;
}

/** The senders service's rule (senders/reply-window.ts), on the sender as the service shows it. */
const windowOpen = (sender: { lastInboundAt: string | null }, now: Date) =>
  isReplyWindowOpen(sender.lastInboundAt === null ? null : new Date(sender.lastInboundAt), now);

function windowView(c: Conversation, now: Date): Html {
  const expires = c.sender.replyWindowExpiresAt;
  if (windowOpen(c.sender, now))
    return html`<p class="notice" id="reply-window">The reply window is open until ${when(expires)}.</p>`;
  return html`<p class="warn" id="reply-window">
    ${
      c.sender.lastInboundAt
        ? html`The reply window closed at ${when(expires)} (the number last wrote ${when(c.sender.lastInboundAt)}).`
        : 'This number has never written to this account.'
    }
    Free text can be sent only within ${REPLY_WINDOW_MS / 3600_000} hours of the number's last message: send an approved
    template.
  </p>`;
}

/** The problem of a refused form beside its field. */
function fieldProblem(draft: Draft | null, id: string): { attrs: Part; box: Part } {
  if (!draft?.err) return { attrs: '', box: '' };
  return {
    attrs: html`aria-invalid="true" aria-describedby="${id}-error"`,
    box: html`<div id="${id}-error" class="field-error">${errorBox(draft.err, LABELS)}</div>`,
  };
}

/** The reply's text field, its content right after the tag (a leading line break would be dropped by browsers). */
// prettier-ignore
const replyTextarea = (text: string, attrs: Part) =>
  html`<textarea id="reply-text" name="text" rows="3" required data-max-chars="${PROVIDER_TEXT_MAX}" data-counter="reply-text-count" ${attrs}>${text}</textarea>`;

function textForm(ctx: PageContext, action: string, draft: Draft | null): Html {
  const p = fieldProblem(draft?.kind === 'text' ? draft : null, 'reply-text');
  return html`<form method="post" action="${action}" class="stack" id="reply-form">
    ${csrfField(ctx.session)}
    <input type="hidden" name="kind" value="text" />
    <input type="hidden" name="externalId" value="${draft?.externalId ?? newExternalId()}" />
    <label for="reply-text">Reply</label>
    ${replyTextarea(draft?.text ?? '', p.attrs)}
    <p id="reply-text-count" class="hint" aria-live="polite">
      At most ${number(PROVIDER_TEXT_MAX)} characters (the longest text the provider delivers).
    </p>
    ${p.box}
    <button type="submit">Send reply</button>
  </form>`;
}

/** The lines of the variables box: one value each, blank lines left out. */
const variableLines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((v) => v.trim())
    .filter((v) => v !== '');

const bodyText = (t: Template) => String(t.components.find((c) => String(c.type).toUpperCase() === 'BODY')?.text ?? '');
const headerText = (t: Template) => {
  const h = t.components.find((c) => String(c.type).toUpperCase() === 'HEADER');
  return h && String(h.format ?? 'TEXT').toUpperCase() === 'TEXT' ? String(h.text ?? '') : '';
};

const footerText = (t: Template) =>
  String(t.components.find((c) => String(c.type).toUpperCase() === 'FOOTER')?.text ?? '');

/**
 * The chosen template filled with the variables typed so far, as the recipient would read it; a
 * variable not given yet stays `{{n}}`. portal.js redraws it as the form changes (decision 0068).
 */
function templatePreview(t: Template | undefined, variables: string): Html {
  const filled = t ? filledTemplate(t.components, { body: variableLines(variables) }) : null;
  return html`<figure class="template-preview" id="reply-preview" aria-live="polite">
    <figcaption>Preview</figcaption>
    <p class="preview-header" data-preview="header">${filled?.header ?? ''}</p>
    <p class="preview-body" data-preview="body">${filled?.body ?? ''}</p>
    <p class="preview-footer" data-preview="footer">${filled?.footer ?? ''}</p>
  </figure>`;
}

function templateForm(ctx: PageContext, action: string, templates: Template[] | Html, draft: Draft | null): Html {
  if (!Array.isArray(templates)) return templates;
  if (templates.length === 0) return html`<p>This account has no approved template to send.</p>`;
  const p = fieldProblem(draft?.kind === 'template' ? draft : null, 'reply-template');
  const chosen = templates.find((t) => `${t.name}:${t.language}` === draft?.template) ?? templates[0];
  return html`<form method="post" action="${action}" class="stack" id="reply-form">
    ${csrfField(ctx.session)}
    <input type="hidden" name="kind" value="template" />
    <input type="hidden" name="externalId" value="${draft?.externalId ?? newExternalId()}" />
    <label for="reply-template">Template</label>
    <select id="reply-template" name="template" required ${p.attrs}>
      ${templates.map((t) => {
        const value = `${t.name}:${t.language}`;
        const variables =
          t.parameterCount === 1 ? ', 1 variable' : t.parameterCount > 1 ? `, ${t.parameterCount} variables` : '';
        const label = `${t.name} (${t.language}, ${t.category.toLowerCase()})${variables}`;
        return html`<option
          value="${value}"
          data-body="${bodyText(t)}"
          data-header="${headerText(t)}"
          data-footer="${footerText(t)}"
          data-count="${String(t.parameterCount)}"
          ${t === chosen ? 'selected' : ''}
        >
          ${label}
        </option>`;
      })}
    </select>
    <label for="reply-variables">Template variables, one per line, in order</label>
    <textarea id="reply-variables" name="variables" rows="3">${draft?.variables ?? ''}</textarea>
    ${p.box} ${templatePreview(chosen, draft?.variables ?? '')}
    <p>
      <button type="submit">Send template</button>
      <button type="submit" name="preview" value="1">Preview</button>
    </p>
  </form>`;
}

/** Each form carries its own externalId: the same form sent twice is one message (the API's idempotency). */
const newExternalId = () => `portal-reply-${crypto.randomBytes(12).toString('base64url')}`;

async function replyBox(deps: PortalDeps, ctx: PageContext, caller: Caller, c: Conversation, draft: Draft | null) {
  if (!canWrite(ctx))
    return html`<p>
      Your role is <strong>${roleName(ctx.session.role)}</strong>: an owner, administrator or support agent of your
      account can reply.
    </p>`;
  const action = `${conversationPath(c.account.id, c.phone)}/reply`;
  if (windowOpen(c.sender, new Date()) && draft?.kind !== 'template') return textForm(ctx, action, draft);
  // A text refused because the window closed meanwhile: its problem above the templates offered instead.
  return html`${draft?.kind === 'text' && draft.err ? errorBox(draft.err, LABELS) : ''}
  ${templateForm(ctx, action, await approvedTemplates(deps, caller, c.account.id), draft)}`;
}

async function conversationPage(deps: PortalDeps, request: FastifyRequest, top: Part, draft: Draft | null = null) {
  const { caller, ctx } = await tenantOf(deps, request);
  const { accountId, phone } = pathOf(request);
  const q = pageQuery(request);
  let c: Conversation;
  try {
    c = await deps.conversations.read(caller, accountId, phone, q.cursor || undefined);
  } catch (err) {
    if (err instanceof AppError && err.code === 'feature_not_available')
      return page(ctx, 'Conversation', gate(caller.tenant.plan, 'inbox', 'The conversation view'));
    throw err;
  }
  const path = conversationPath(c.account.id, c.phone);
  return page(
    ctx,
    `Conversation with ${c.phone}`,
    html`${top}
      <p>
        On <strong>${c.account.displayName}</strong> (${c.account.phoneNumber}).
        <a href="/portal/inbox?${new URLSearchParams({ from: c.phone, chatAccountId: c.account.id }).toString()}"
          >This number in the inbox</a
        >
      </p>
      ${
        c.sender.firstReferral
          ? html`<p class="first-referral">First wrote after ${referralPart(c.sender.firstReferral)}</p>`
          : ''
      }
      ${windowView(c, new Date())} ${q.cursor ? html`<p><a href="${path}">Newest messages</a></p>` : ''} ${itemsView(c)}
      ${c.nextCursor ? html`<p><a rel="next" href="${path}?cursor=${c.nextCursor}">Earlier messages</a></p>` : ''}
      <section aria-labelledby="reply-h">
        <h2 id="reply-h">Reply to this number</h2>
        ${await replyBox(deps, ctx, caller, c, draft)}
      </section>`,
  );
}

/** The send a reply form asks for; refused (window closed, a template not offered) before it is sent. */
async function replyRequest(deps: PortalDeps, caller: Caller, request: FastifyRequest): Promise<SendRequest> {
  const { accountId, phone } = pathOf(request);
  const body = request.body;
  const sender = await deps.senders.lookupOne(caller, phone, accountId);
  const base = { externalId: str(body, 'externalId'), to: { type: 'phone' as const, phoneE164: sender.phoneE164 } };
  let req: unknown;
  if (str(body, 'kind') === 'template') {
    const templates = await approvedTemplates(deps, caller, sender.chatAccountId);
    const chosen = Array.isArray(templates)
      ? templates.find((t) => `${t.name}:${t.language}` === str(body, 'template'))
      : undefined;
    if (!chosen)
      throw errors.validation([{ path: 'content.template.name', message: 'choose one of the approved templates' }]);
    const values = variableLines(str(body, 'variables'));
    req = {
      ...base,
      chatAccountId: sender.chatAccountId,
      content: {
        type: 'template',
        template: {
          name: chosen.name,
          language: chosen.language,
          ...(values.length > 0 ? { components: { body: values } } : {}),
        },
      },
    };
  } else {
    if (!windowOpen(sender, new Date())) throw windowClosed();
    const text = str(body, 'text');
    const length = [...text].length;
    // The API takes up to 10,000 characters, but the provider refuses a longer text than this after it was accepted.
    if (length > PROVIDER_TEXT_MAX)
      throw errors.validation([
        {
          path: 'content.text',
          message: `is ${number(length)} characters long; the provider delivers at most ${number(PROVIDER_TEXT_MAX)} in one message, so shorten it or send it in parts`,
        },
      ]);
    req = {
      ...base,
      chatAccountId: sender.chatAccountId,
      content: { type: 'text', text: text.trim() === '' ? '' : text },
      // Never outside the window, even if it closes between this check and the send.
      requireReplyWindow: true,
    };
  }
  const ok = validate(req);
  const problems = [
    ...(ok ? [] : toProblems(validate.errors ?? [])),
    ...crossFieldProblems(req, { allowPrivateUrls: deps.allowPrivateUrls }),
  ];
  if (problems.length > 0) throw errors.validation(problems);
  return req as SendRequest;
}

export function registerConversationRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/conversations/:accountId/:phone', async (request, reply) => {
    const done = doneNotice(pageQuery(request), {
      sent: 'Sent: your reply is on its way.',
      'template-sent': 'Sent: the template is on its way.',
    });
    return sendPage(reply, await conversationPage(deps, request, done));
  });

  // Owners only (a viewer's POST is refused by portal-plugin.ts before its body is read).
  app.post('/conversations/:accountId/:phone/reply', async (request, reply) => {
    const { caller, session } = await tenantOf(deps, request);
    const { accountId } = pathOf(request);
    const kind = str(request.body, 'kind') === 'template' ? 'template' : 'text';
    if (kind === 'template' && str(request.body, 'preview') !== '') {
      // Shown again with its preview, nothing sent (the form without portal.js).
      const b = request.body;
      const draft: Draft = {
        kind,
        text: '',
        template: str(b, 'template'),
        variables: str(b, 'variables'),
        externalId: str(b, 'externalId'),
        err: null,
      };
      return sendPage(reply, await conversationPage(deps, request, '', draft));
    }
    let to: string;
    try {
      deps.settings.checkAllowed(caller);
      const req = await replyRequest(deps, caller, request);
      to = req.to.phoneE164!; // a portal reply always names the number
      await deps.sends.send(caller, req);
      await audit(deps, request, session, 'message.send', `${kind === 'template' ? 'a template' : 'a reply'} to ${to}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      if (err.code === 'feature_not_available') throw err;
      const b = request.body;
      const draft: Draft = {
        kind,
        text: str(b, 'text'),
        template: str(b, 'template'),
        variables: str(b, 'variables'),
        externalId: str(b, 'externalId'),
        err,
      };
      return sendPage(reply, await conversationPage(deps, request, '', draft), err.status);
    }
    const done = kind === 'template' ? 'template-sent' : 'sent';
    return reply.redirect(`${conversationPath(accountId, to)}?done=${done}`, 303);
  });

  // One inbound message with its content by kind (plan Pro, as the inbox).
  app.get('/inbox/:id', async (request, reply) => {
    const { caller, ctx } = await tenantOf(deps, request);
    const m = await deps.senders.inboundMessage(caller, idParam(request));
    return sendPage(
      reply,
      page(
        ctx,
        `Inbound message from ${m.from ?? m.fromUserId ?? 'unknown'}`,
        html`${inboundDetail(m)}
          <p>
            ${conversationLink(m.chatAccountId, m.from, 'The whole conversation')} ·
            <a href="/portal/inbox">Back to the inbox</a>
          </p>`,
      ),
    );
  });
}
