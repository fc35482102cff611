// The page shell every portal page shares: navigation, the signed-in user, notices, and the
// blocks (errors, plan gates, forms' CSRF field) that keep the pages consistent.
import type { Plan } from '../../plans/plans.js';
import { type Feature } from '../../plans/plans.js';
import type { Session } from '../../portal/session-service.js';
import { AppError } from '../../shared/errors.js';
import { planName, plansWith } from './format.js';
import { type Html, html, type Part } from './html.js';
import type { PageQuery } from './input.js';

export type PageContext = { session: Session; plan: Plan; path: string };

const NAV: [string, string][] = [
  ['/portal', 'Overview'],
  ['/portal/messages', 'Messages'],
  ['/portal/keys', 'API keys'],
  ['/portal/accounts', 'Chat accounts'],
  ['/portal/webhooks', 'Webhooks'],
  ['/portal/inbox', 'Inbox'],
  ['/portal/broadcasts', 'Broadcasts'],
  ['/portal/templates', 'Templates'],
  ['/portal/suppressions', 'Suppressions'],
  ['/portal/team', 'Team'],
  ['/portal/audit', 'Audit log'],
  ['/portal/profile', 'Your account'],
];

/** The portal's section a path belongs to (its navigation entry): where a dead end leads back to. */
function sectionOf(path: string): { href: string; label: string } {
  const p = path.split('?')[0] ?? '';
  const found = NAV.filter(
    ([href]) => href !== '/portal' && (p === href || p.startsWith(`${href}/`) || p.startsWith(`${href}.`)),
  ).at(-1);
  const [href, label] = found ?? NAV[0]!;
  return { href, label };
}

/** The way out of a dead end: the section's page, and the overview. */
export function wayBack(path: string): Html {
  const s = sectionOf(path);
  return html`<p class="way-back">
    ${s.href === '/portal' ? '' : html`<a href="${s.href}">Back to ${s.label}</a> · `}
    <a href="/portal">The overview</a>
  </p>`;
}

function head(title: string): Html {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}' />
    <title>${title} · ChatGate portal</title>
    <link rel="stylesheet" href="/portal/assets/portal.css" />
    <script src="/portal/assets/htmx.min.js" defer></script>
    <script src="/portal/assets/portal.js" defer></script>
  </head>`;
}

export function csrfField(session: Pick<Session, 'csrfToken'>): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}" />`;
}

/** A signed-in page. */
export function page(ctx: PageContext, title: string, body: Part): Html {
  const current = NAV.filter(([href]) => ctx.path === href || (href !== '/portal' && ctx.path.startsWith(href)));
  return html`<!doctype html>
    <html lang="en">
      ${head(title)}
      <body hx-headers='{"x-csrf-token":"${ctx.session.csrfToken}"}'>
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <span class="brand">ChatGate</span>
          <span class="plan">Plan: <strong>${planName(ctx.plan)}</strong></span>
          <span class="who">${ctx.session.email} (${ctx.session.role})</span>
          <button type="button" id="time-toggle" aria-pressed="false" hidden>Local times</button>
          <a href="/portal/account/security">Security</a>
          <form method="post" action="/portal/logout" class="inline">
            ${csrfField(ctx.session)}<button type="submit">Log out</button>
          </form>
          <form method="post" action="/portal/logout-everywhere" class="inline">
            ${csrfField(ctx.session)}<button type="submit">Log out everywhere</button>
          </form>
        </header>
        <nav aria-label="Portal">
          <ul>
            ${NAV.map(
              ([href, label]) =>
                html`<li>
                  <a href="${href}" ${current.at(-1)?.[0] === href ? html`aria-current="page"` : ''}>${label}</a>
                </li>`,
            )}
          </ul>
        </nav>
        <main id="main">
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** A page for visitors who are not signed in (login, invitation). */
export function publicPage(title: string, body: Part): Html {
  return html`<!doctype html>
    <html lang="en">
      ${head(title)}
      <body>
        <header class="top"><span class="brand">ChatGate</span></header>
        <main id="main" class="narrow">
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** A field path of the API (`numbers.3`, `condition.pattern`) in words, when the form did not name it. */
function fieldWords(path: string): string {
  const words = path
    .split('.')
    .filter((p) => !/^\d+$/.test(p))
    .map((p) => p.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase())
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * An error of a service for a person: its message (or the code in words), and each detail with
 * its field's label (`labels` maps the API's paths to the form's labels). Never the raw code.
 */
export function errorBox(err: unknown, labels: Record<string, string> = {}): Html {
  if (!(err instanceof AppError)) return html`<div class="error" role="alert"><p>Something went wrong.</p></div>`;
  const body = err.body();
  const details = Array.isArray(body.details) ? (body.details as { path: string; message: string }[]) : [];
  const message =
    typeof body.message === 'string'
      ? body.message
      : details.length > 0
        ? 'Please correct the following.'
        : // The code in words, with the reason the service gave (invalid_webhook_url: why the URL is refused).
          `${err.code.charAt(0).toUpperCase()}${err.code.slice(1).replaceAll('_', ' ')}${
            err.code === 'invalid_webhook_url' && typeof body.reason === 'string' ? `: the address ${body.reason}` : ''
          }.`;
  return html`<div class="error" role="alert">
    <p>${message}</p>
    ${
      details.length > 0
        ? html`<ul>
            ${details.map((d) => html`<li><strong>${labels[d.path] ?? fieldWords(d.path)}</strong>: ${d.message}</li>`)}
          </ul>`
        : ''
    }
  </div>`;
}

export function notice(text: Part): Html {
  return html`<div class="notice" role="status">${text}</div>`;
}

/** A feature the plan does not include: shown, with the plans that enable it. */
export function gate(plan: Plan, feature: Feature, what: string): Html {
  return html`<section class="gate" aria-labelledby="gate-title">
    <h2 id="gate-title">${what} is not in your plan</h2>
    <p>
      Your plan is <strong>${planName(plan)}</strong>. ${what} is available on the
      <strong>${plansWith(feature)}</strong> plans. Ask your operator to change your plan.
    </p>
  </section>`;
}

export function sandboxBadge(sandbox: boolean): Html {
  return sandbox ? html`<span class="badge sandbox" title="Simulated: nothing is sent">SANDBOX</span>` : html``;
}

export function copyButton(targetId: string): Html {
  return html`<button type="button" class="copy" data-copy="${targetId}">Copy</button>`;
}

/**
 * The notice a page shows after a form redirected to it (post/redirect/get): `?done=<code>` names
 * one of the page's fixed messages, so nothing the URL carries is shown as text.
 */
export function doneNotice(query: PageQuery, messages: Record<string, Part>): Part {
  const done = query.done;
  return done !== undefined && Object.hasOwn(messages, done) ? notice(messages[done]) : '';
}

/**
 * A confirmation step that works without JavaScript: a page (GET, changes nothing) saying what
 * the action does, with the one button that POSTs it and a way back.
 */
export function confirmPage(
  ctx: PageContext,
  title: string,
  warning: Part,
  action: string,
  button: string,
  back: string,
): Html {
  if (ctx.session.role !== 'owner')
    return page(
      ctx,
      title,
      html`<p role="alert">Your role is <strong>viewer</strong>: an owner of your account can do this.</p>
        <a href="${back}">Go back</a>`,
    );
  return page(
    ctx,
    title,
    html`<div class="warn" role="alert">${warning}</div>
      <form method="post" action="${action}" class="inline">
        ${csrfField(ctx.session)}
        <button type="submit" class="danger">${button}</button>
      </form>
      <a href="${back}">Go back</a>`,
  );
}
