// Webhook pages beyond the endpoint's own (issue #27, decision 0048): one delivery with the request
// each attempt sent (headers and body) and each answer; deleting an endpoint (confirmed on a page);
// and replaying every failed delivery of a period (owners, confirmed, bounded, audited).
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Session } from '../../portal/session-service.js';
import { AppError, errors } from '../../shared/errors.js';
import { MAX_REPLAY } from '../../webhooks/delivery-store.js';
import { requestHeaders } from '../../webhooks/signature.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam } from './deps.js';
import { number, parseWhen, when } from './format.js';
import { type Html, html } from './html.js';
import { pageQuery } from './input.js';
import { confirmPage, csrfField, errorBox, page, type PageContext } from './layout.js';
import { at, fieldList } from './message-page.js';
import { sendPage } from './reply.js';

/** webhooks-routes.ts's check: the page's context once the plan allows webhooks, else the gate page in `gated`. */
type Allowed = (
  deps: PortalDeps,
  request: FastifyRequest,
) => Promise<{ session: Session; caller: Caller; ctx: PageContext; gated: Html | null }>;

type Delivery = Awaited<ReturnType<PortalDeps['endpoints']['delivery']>>;

/** A delivery's status in words. */
export const DELIVERY_STATUS: Record<string, string> = {
  pending: 'waiting to be sent',
  succeeded: 'delivered',
  failed: 'failed: no more retries',
};

/** The longest period one replay covers (deliveries are kept 30 days). */
const MAX_REPLAY_DAYS = 31;

/**
 * The headers one attempt sent: all but the signature's HMACs are its event's and its time's. The
 * `v1` values are not kept (decision 0048): they were made with the secret(s) valid then, which a
 * rotation has since replaced, and recomputing them with today's would show what was never sent.
 */
function attemptHeaders(d: Delivery, attemptedAt: string): string {
  const t = Math.floor(new Date(attemptedAt).getTime() / 1000);
  const headers = requestHeaders(d, `t=${t},v1=<HMAC-SHA256 with each signing secret valid then; not kept>`);
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
}

function deliveryPage(ctx: PageContext, endpoint: { id: string; url: string }, d: Delivery): Html {
  const owner = ctx.session.role === 'owner';
  return page(
    ctx,
    `Delivery of ${d.eventType}`,
    html`${fieldList([
        ['Endpoint', html`<a href="/portal/webhooks/${endpoint.id}">${endpoint.url}</a>`],
        ['Event', html`${d.eventType} <code>${d.eventId}</code>`],
        ['Status', DELIVERY_STATUS[d.status] ?? d.status],
        ['Attempts', String(d.attemptCount)],
        ['Created', at(d.createdAt)],
        ['Next attempt', d.nextAttemptAt ? at(d.nextAttemptAt) : null],
        ['Finished', d.completedAt ? at(d.completedAt) : null],
        ['Last answer', d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : null],
      ])}
      ${
        owner
          ? html`<form
              method="post"
              action="/portal/webhooks/${endpoint.id}/deliveries/${d.id}/redeliver"
              class="inline"
            >
              ${csrfField(ctx.session)}<button type="submit">Redeliver</button>
            </form>`
          : ''
      }
      <h2>Request body</h2>
      <p>The same bytes on every attempt (the signature covers them).</p>
      <pre class="request-body" tabindex="0" aria-label="Request body">${d.body}</pre>
      <h2>Attempts</h2>
      ${
        d.attempts.length === 0
          ? html`<p>No attempt yet${d.nextAttemptAt ? html`: the first is due at ${at(d.nextAttemptAt)}` : ''}.</p>`
          : html`<ol class="attempts">
              ${d.attempts.map(
                (a) =>
                  html`<li class="attempt">
                    ${at(a.attemptedAt)}:
                    <strong>${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`}</strong> after
                    ${String(a.durationMs ?? '?')} ms${a.error ? html` — ${a.error}` : ''}
                    <h3>Headers sent</h3>
                    <pre class="headers" tabindex="0" aria-label="Headers sent">
POST ${endpoint.url}
${attemptHeaders(d, a.attemptedAt)}</pre>
                    ${
                      a.responseBody
                        ? html`<h3>Answer (first KiB)</h3>
                            <pre class="excerpt" tabindex="0" aria-label="Answer">${a.responseBody}</pre>`
                        : ''
                    }
                  </li>`,
              )}
            </ol>`
      }
      <p class="hint">
        The signature's <code>t</code> is each attempt's time; its <code>v1</code> values (one per signing secret valid
        then, two in the 24 hours after a rotation) are not kept.
      </p>
      <p><a href="/portal/webhooks/${endpoint.id}">Back to the endpoint</a></p>`,
  );
}

/** The replay's period from the form (`since`, `until`), checked: both given, in order, at most MAX_REPLAY_DAYS. */
function replayPeriod(q: Record<string, unknown>): { since: Date; until: Date } {
  const since = parseWhen(typeof q.since === 'string' ? q.since : undefined, 'since');
  const until = parseWhen(typeof q.until === 'string' ? q.until : undefined, 'until');
  const bad = (path: string, message: string) => errors.validation([{ path, message }]);
  if (!since) throw bad('since', 'is needed: the start of the period');
  if (!until) throw bad('until', 'is needed: the end of the period');
  if (since >= until) throw bad('until', 'must be after “since”');
  if (until.getTime() - since.getTime() > MAX_REPLAY_DAYS * 86400_000)
    throw bad('until', `must be at most ${MAX_REPLAY_DAYS} days after “since”`);
  return { since, until };
}

const REPLAY_LABELS = { since: 'From (UTC)', until: 'Until (UTC)' };

/** The replay form of the endpoint page (owners): a GET to the confirmation page. */
export function replayForm(endpointId: string): Html {
  // The last 24 hours, up to the next whole minute (the field has minutes: deliveries of this minute are in).
  const now = new Date(Date.now() + 60_000);
  const day = new Date(now.getTime() - 86400_000);
  const local = (d: Date) => d.toISOString().slice(0, 16);
  return html`<form method="get" action="/portal/webhooks/${endpointId}/replay" class="filters">
      <div>
        <label for="replay-since">From (UTC)</label>
        <input id="replay-since" name="since" type="datetime-local" value="${local(day)}" required />
      </div>
      <div>
        <label for="replay-until">Until (UTC)</label>
        <input id="replay-until" name="until" type="datetime-local" value="${local(now)}" required />
      </div>
      <button type="submit">Replay failed deliveries…</button>
    </form>
    <p class="hint" id="replay-scope">
      A replay sends again the deliveries that failed for good (no more retries). Deliveries still being retried are not
      part of it: they keep their own next attempt (listed below); Redeliver on one sends it now.
    </p>`;
}

const isoMinute = (d: Date) => d.toISOString();

export function registerDeliveryRoutes(app: FastifyInstance, deps: PortalDeps, allowed: Allowed): void {
  app.get('/webhooks/:id/deliveries/:deliveryId', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const id = idParam(request);
    const [endpoint, d] = await Promise.all([
      deps.endpoints.get(a.caller, id),
      deps.endpoints.delivery(a.caller, id, idParam(request, 'deliveryId')),
    ]);
    return sendPage(reply, deliveryPage(a.ctx, endpoint, d));
  });

  app.get('/webhooks/:id/delete', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const e = await deps.endpoints.get(a.caller, idParam(request));
    return sendPage(
      reply,
      confirmPage(
        a.ctx,
        'Delete a webhook endpoint',
        html`<p>
          Delete the endpoint <code>${e.url}</code>? No more events are sent to it, deliveries waiting for it are
          dropped, and its delivery history is deleted. This cannot be undone.
        </p>`,
        `/portal/webhooks/${e.id}/delete`,
        'Delete the endpoint',
        `/portal/webhooks/${e.id}`,
      ),
    );
  });

  app.post('/webhooks/:id/delete', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    const e = await deps.endpoints.get(a.caller, id);
    await deps.endpoints.remove(a.caller, id);
    await audit(deps, request, a.session, 'webhook.delete', e.url);
    return reply.redirect('/portal/webhooks?done=deleted', 303);
  });

  registerReplayRoutes(app, deps, allowed);
}

/** Replaying the failed deliveries of a period: a confirmation page (GET) saying how many, then the POST. */
function registerReplayRoutes(app: FastifyInstance, deps: PortalDeps, allowed: Allowed): void {
  app.get('/webhooks/:id/replay', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const e = await deps.endpoints.get(a.caller, idParam(request));
    const back = `/portal/webhooks/${e.id}`;
    let period: { since: Date; until: Date };
    try {
      period = replayPeriod(pageQuery(request));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const body = html`${errorBox(err, REPLAY_LABELS)}<a href="${back}">Go back</a>`;
      return sendPage(reply, page(a.ctx, 'Replay failed deliveries', body), err.status);
    }
    const n = await deps.endpoints.failedCount(a.caller, e.id, period.since, period.until);
    const span = html`created from ${when(isoMinute(period.since))} until ${when(isoMinute(period.until))}`;
    if (n === 0)
      return sendPage(
        reply,
        page(
          a.ctx,
          'Replay failed deliveries',
          html`<p>No failed deliveries to <code>${e.url}</code> ${span}: nothing to replay.</p>
            <a href="${back}">Go back</a>`,
        ),
      );
    return sendPage(
      reply,
      confirmPage(
        a.ctx,
        'Replay failed deliveries',
        html`<p>
            Send again the ${n > MAX_REPLAY ? `more than ${number(MAX_REPLAY)}` : number(n)} failed
            ${n === 1 ? 'delivery' : 'deliveries'} to <code>${e.url}</code> ${span}? Each keeps its event id (your
            receiver deduplicates on it) and gets a fresh set of attempts.
          </p>
          <p>Deliveries still being retried are not replayed: they keep their own next attempt.</p>
          ${n > MAX_REPLAY ? html`<p>One replay queues the oldest ${number(MAX_REPLAY)}; replay again for the rest.</p>` : ''}`,
        // The period rides in the action's query string (the confirmation form carries only its token).
        `/portal/webhooks/${e.id}/replay?${new URLSearchParams({ since: period.since.toISOString(), until: period.until.toISOString() }).toString()}`,
        'Replay them',
        back,
      ),
    );
  });

  app.post('/webhooks/:id/replay', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    const { since, until } = replayPeriod(pageQuery(request));
    const { queued, more } = await deps.endpoints.redeliverFailed(a.caller, id, since, until);
    const { url } = await deps.endpoints.get(a.caller, id);
    await audit(
      deps,
      request,
      a.session,
      'webhook.replay_failed',
      `${url}: ${queued} queued, ${since.toISOString()} – ${until.toISOString()}`,
    );
    const done = queued === 0 ? 'replayed-none' : more ? 'replayed-more' : 'replayed';
    return reply.redirect(`/portal/webhooks/${id}?done=${done}`, 303);
  });
}

/** The endpoint page's notices after a replay (post/redirect/get). */
export const REPLAY_NOTICES = {
  replayed: 'Every failed delivery of the period is queued again.',
  'replayed-more': `The oldest ${number(MAX_REPLAY)} failed deliveries of the period are queued again; replay again for the rest.`,
  'replayed-none': 'No failed delivery of the period was left to replay.',
};
