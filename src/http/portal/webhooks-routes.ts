// Webhook endpoints (plans Basic and Pro): create (secret shown once), edit, rotate the secret,
// send a test event, the delivery history with every attempt, and redelivery; one delivery's page,
// deleting an endpoint and replaying a period's failed deliveries are in webhook-deliveries.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import { AppError, errors } from '../../shared/errors.js';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from '../../shared/vocab.js';
import { CreateEndpointSchema, UpdateEndpointSchema } from '../../webhooks/endpoint-input.js';
import { MAX_ACTIVE_ENDPOINTS } from '../../webhooks/endpoint-service.js';
import { toProblems, validatorCompiler } from '../validation.js';
import type { PortalDeps } from './deps.js';
import { audit, idParam, recheckPassword, stashSecret, str, takeSecret, tenantOf } from './deps.js';
import { when } from './format.js';
import { type Html, html, type Part } from './html.js';
import { pageQuery } from './input.js';
import {
  confirmPage,
  copyButton,
  csrfField,
  doneNotice,
  errorBox,
  gate,
  notice,
  page,
  type PageContext,
} from './layout.js';
import { sendPage } from './reply.js';
import { DELIVERY_STATUS, registerDeliveryRoutes, REPLAY_NOTICES, replayForm } from './webhook-deliveries.js';
import { type DeliveryFilter, deliveryFilterForm, deliveryFilterOf, registerEventCatalogue } from './webhook-events.js';

function listOf(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
}

/** The endpoint forms' labels for the API's paths. */
const ENDPOINT_LABELS: Record<string, string> = { url: 'HTTPS URL', events: 'Events', description: 'Description' };

const validateCreate = compile(CreateEndpointSchema);
const validateUpdate = compile(UpdateEndpointSchema);

function compile(schema: object) {
  return validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '' }) as unknown as ((
    data: unknown,
  ) => boolean) & { errors?: never[] | null };
}

/** The form's fields, checked by the API's own schema (the same problems, in the same words). */
function endpointInput<T>(validate: ReturnType<typeof compile>, input: Record<string, unknown>): T {
  if (!validate(input)) throw errors.validation(toProblems(validate.errors ?? []));
  return input as T;
}

function secretShown(secret: string) {
  return notice(
    html`<p><strong>The signing secret, shown once. Copy it now.</strong></p>
      <p><code id="secret" class="secret">${secret}</code> ${copyButton('secret')}</p>`,
  );
}

/** A signing secret a create or rotate redirected here with (`?shown=`), shown on this one view only. */
async function shownSecret(deps: PortalDeps, request: FastifyRequest): Promise<Part> {
  const shown = await takeSecret(deps, request, 'webhook.');
  if (shown === 'gone')
    return notice('The signing secret was shown once and is no longer shown here. Rotate it if it was not copied.');
  return shown ? secretShown(shown.value) : '';
}

/** The notice after a test event or a redelivery was queued (they redirect here, post/redirect/get). */
function queuedNotice(request: FastifyRequest): Part {
  const queued = pageQuery(request).queued ?? '';
  if (queued === 'redelivery') return notice('Redelivery queued.');
  if (/^evt_[0-9a-f-]{36}$/.test(queued)) return notice(html`Test event <code>${queued}</code> queued.`);
  return '';
}

/** The event-type checkboxes of the endpoint forms (add and edit), `checked` ticked. */
function eventsFieldset(checked: readonly string[]): Html {
  return html`<fieldset>
    <legend>Events</legend>
    <p><a href="/portal/webhooks/events">What each event carries, with an example</a></p>
    ${EVENT_TYPES.map(
      (ev, i) =>
        html`<div>
          <input id="ev-${i}" type="checkbox" name="events" value="${ev}" ${checked.includes(ev) ? 'checked' : ''} />
          <label for="ev-${i}">${ev}</label>
        </div>`,
    )}
  </fieldset>`;
}

/** The page's context once the plan allows webhooks; otherwise the gate page is sent. */
async function allowed(deps: PortalDeps, request: FastifyRequest) {
  const t = await tenantOf(deps, request);
  try {
    deps.endpoints.checkAllowed(t.caller);
    return { ...t, gated: null };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ...t, gated: page(t.ctx, 'Webhook endpoints', gate(t.tenant.plan, 'webhooks', 'Webhooks')) };
  }
}

type Endpoints = Awaited<ReturnType<PortalDeps['endpoints']['list']>>;
type Health = Awaited<ReturnType<PortalDeps['queries']['webhookHealth']>>;

function endpointsTable(endpoints: Endpoints, health: Health): Html {
  return html`<table>
    <caption>
      Endpoints
    </caption>
    <thead>
      <tr>
        <th scope="col">URL</th>
        <th scope="col">Description</th>
        <th scope="col">Events</th>
        <th scope="col">Active</th>
        <th scope="col">Success (7 days)</th>
        <th scope="col">Last failure</th>
      </tr>
    </thead>
    <tbody>
      ${endpoints.map((e) => {
        const h = health.get(e.id);
        return html`<tr>
          <td><a href="/portal/webhooks/${e.id}">${e.url}</a></td>
          <td>${e.description}</td>
          <td>${e.events.join(', ')}</td>
          <td>${e.isActive ? 'yes' : 'no'}</td>
          <td>${h && h.total > 0 ? `${Math.round((h.ok / h.total) * 100)}% of ${h.total}` : '—'}</td>
          <td>${e.lastFailureAt ? html`${when(e.lastFailureAt)}: ${e.lastFailureReason ?? ''}` : '—'}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}

async function listPage(deps: PortalDeps, ctx: PageContext, caller: Caller, top: Part) {
  const [endpoints, health] = await Promise.all([
    deps.endpoints.list(caller),
    deps.queries.webhookHealth(caller.tenant.customerId),
  ]);
  const owner = ctx.session.role === 'owner';
  return page(
    ctx,
    'Webhook endpoints',
    html`${top}
      <p>${endpoints.filter((e) => e.isActive).length} of ${MAX_ACTIVE_ENDPOINTS} active endpoints.</p>
      ${
        endpoints.length === 0
          ? html`<p class="empty">
              No endpoints yet. An endpoint is an HTTPS address of yours that receives events (a message's status, an
              inbound message) as signed POST
              requests.${owner ? ' Add one below.' : ' An owner of your account can add one.'}
            </p>`
          : endpointsTable(endpoints, health)
      }
      ${
        owner
          ? html`<section aria-labelledby="new-ep">
              <h2 id="new-ep">Add an endpoint</h2>
              <form method="post" action="/portal/webhooks" class="stack">
                ${csrfField(ctx.session)}
                <label for="url">HTTPS URL</label>
                <input id="url" name="url" type="url" required maxlength="2048" />
                <label for="description">Description</label>
                <input id="description" name="description" maxlength="500" />
                ${eventsFieldset(DEFAULT_EVENT_TYPES)}
                <button type="submit">Add endpoint</button>
              </form>
            </section>`
          : ''
      }`,
  );
}

async function detailPage(
  deps: PortalDeps,
  ctx: PageContext,
  caller: Caller,
  id: string,
  top: Part,
  filter: DeliveryFilter = {},
) {
  const e = await deps.endpoints.get(caller, id);
  const { deliveries } = await deps.endpoints.deliveries(caller, id, { limit: 50, ...filter });
  const filtered = filter.eventType !== undefined || filter.status !== undefined;
  const owner = ctx.session.role === 'owner';
  const action = (path: string, label: string) =>
    html`<form method="post" action="/portal/webhooks/${e.id}/${path}" class="inline">
      ${csrfField(ctx.session)}<button type="submit">${label}</button>
    </form>`;
  return page(
    ctx,
    `Endpoint ${e.url}`,
    html`${top}
      <dl class="fields">
        <dt>id</dt>
        <dd><code>${e.id}</code></dd>
        <dt>Last success</dt>
        <dd>${when(e.lastSuccessAt)}</dd>
        <dt>Last failure</dt>
        <dd>${when(e.lastFailureAt)} ${e.lastFailureReason ?? ''}</dd>
      </dl>
      ${
        owner
          ? html`<form method="post" action="/portal/webhooks/${e.id}" class="stack">
                ${csrfField(ctx.session)}
                <label for="url">URL</label>
                <input id="url" name="url" type="url" required value="${e.url}" />
                <label for="description">Description</label>
                <input id="description" name="description" value="${e.description}" maxlength="500" />
                ${eventsFieldset(e.events)}
                <div>
                  <input id="isActive" type="checkbox" name="isActive" value="true" ${e.isActive ? 'checked' : ''} />
                  <label for="isActive">Active</label>
                </div>
                <label for="password">Your password (needed only to change the URL)</label>
                <input id="password" name="password" type="password" autocomplete="current-password" />
                <button type="submit">Save</button>
              </form>
              <p>
                ${action('test', 'Send a test event')}
                <a href="/portal/webhooks/${e.id}/rotate-secret">Rotate secret…</a>
                <a href="/portal/webhooks/${e.id}/delete">Delete endpoint…</a>
              </p>`
          : ''
      }
      <h2>Deliveries</h2>
      ${
        owner && (deliveries.length > 0 || filtered)
          ? html`<h3>Replay the failed deliveries of a period</h3>
              ${replayForm(e.id)}`
          : ''
      }
      ${deliveries.length > 0 || filtered ? deliveryFilterForm(e.id, filter) : ''}
      ${
        deliveries.length === 0 && filtered
          ? html`<p class="empty">No deliveries match these filters.</p>`
          : deliveries.length === 0
            ? html`<p class="empty">
                No deliveries yet. Each event this endpoint subscribes to is sent here and listed with every attempt;
                ${owner ? 'send a test event to see one.' : 'an owner can send a test event.'}
              </p>`
            : deliveriesTable(e.id, deliveries, owner ? action : null)
      }
      <p><a href="/portal/webhooks">All endpoints</a></p>`,
  );
}

export function registerWebhookRoutes(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/webhooks', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const done = doneNotice(pageQuery(request), { deleted: 'The endpoint is deleted, with its delivery history.' });
    return sendPage(reply, await listPage(deps, a.ctx, a.caller, html`${await shownSecret(deps, request)}${done}`));
  });

  app.post('/webhooks', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    try {
      const input = endpointInput<Parameters<PortalDeps['endpoints']['create']>[1]>(validateCreate, {
        url: str(request.body, 'url'),
        events: listOf(request.body, 'events'),
        description: str(request.body, 'description'),
      });
      const created = await deps.endpoints.create(a.caller, input);
      await audit(deps, request, a.session, 'webhook.create', created.url);
      // Post/redirect/get: a reload shows the list, it does not add the endpoint again.
      const shown = await stashSecret(deps, request, 'webhook.secret', created.secret);
      return reply.redirect(`/portal/webhooks?shown=${shown}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendPage(reply, await listPage(deps, a.ctx, a.caller, errorBox(err, ENDPOINT_LABELS)), err.status);
    }
  });

  app.get('/webhooks/:id', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const top = html`${await shownSecret(deps, request)}${queuedNotice(request)}${doneNotice(pageQuery(request), {
      saved: 'Saved.',
      ...REPLAY_NOTICES,
    })}`;
    const filter = deliveryFilterOf(pageQuery(request));
    return sendPage(reply, await detailPage(deps, a.ctx, a.caller, idParam(request), top, filter));
  });

  app.post('/webhooks/:id', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    try {
      const input = endpointInput<Parameters<PortalDeps['endpoints']['update']>[2]>(validateUpdate, {
        url: str(request.body, 'url'),
        events: listOf(request.body, 'events'),
        description: str(request.body, 'description'),
        isActive: str(request.body, 'isActive') === 'true',
      });
      // A new URL sends every future event (and its data) elsewhere: it takes the password again,
      // and the audit log keeps both URLs.
      const before = await deps.endpoints.get(a.caller, id);
      const urlChange = input.url !== undefined && input.url !== before.url;
      if (urlChange) await recheckPassword(deps, request, a.session, 'webhook.url_change', before.url);
      await deps.endpoints.update(a.caller, id, input);
      if (urlChange) await audit(deps, request, a.session, 'webhook.url_change', `${before.url} → ${input.url}`);
      else await audit(deps, request, a.session, 'webhook.update', before.url);
      return reply.redirect(`/portal/webhooks/${id}?done=saved`, 303);
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 404) throw err;
      const status = err.status === 401 ? 403 : err.status;
      return sendPage(reply, await detailPage(deps, a.ctx, a.caller, id, errorBox(err, ENDPOINT_LABELS)), status);
    }
  });

  // Rotating changes what the receiver must check: a confirmation page first (no JavaScript needed).
  registerEndpointActions(app, deps);
  // One delivery's page, deleting an endpoint, replaying failed deliveries (webhook-deliveries.ts).
  registerDeliveryRoutes(app, deps, allowed);
  // The events, each with its schema and an example (webhook-events.ts).
  registerEventCatalogue(app, deps, allowed);
}

/** The actions on one endpoint: rotating its secret, a test event, a redelivery. */
function registerEndpointActions(app: FastifyInstance, deps: PortalDeps): void {
  app.get('/webhooks/:id/rotate-secret', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    const e = await deps.endpoints.get(a.caller, idParam(request));
    return sendPage(
      reply,
      confirmPage(
        a.ctx,
        'Rotate the signing secret',
        html`<p>
            A new secret for <code>${e.url}</code> is shown once. For 24 hours every delivery is signed with the new
            secret and the one your receiver has now, so you can switch it without losing events.
          </p>
          <p>
            If you rotated less than 24 hours ago, rotating again keeps the oldest secret valid until its 24 hours end
            and replaces the newer one: a receiver already switched to the newer secret stops verifying.
          </p>`,
        `/portal/webhooks/${e.id}/rotate-secret`,
        'Rotate secret',
        `/portal/webhooks/${e.id}`,
      ),
    );
  });

  app.post('/webhooks/:id/rotate-secret', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    const { secret, url } = await deps.endpoints.rotateSecret(a.caller, id);
    await audit(deps, request, a.session, 'webhook.rotate_secret', url);
    const shown = await stashSecret(deps, request, 'webhook.secret', secret);
    return reply.redirect(`/portal/webhooks/${id}?shown=${shown}`, 303);
  });

  app.post('/webhooks/:id/test', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    const { eventId } = await deps.endpoints.sendTest(a.caller, id);
    await audit(deps, request, a.session, 'webhook.test', (await deps.endpoints.get(a.caller, id)).url);
    // Post/redirect/get: reloading the page that follows must not queue another event.
    return reply.redirect(`/portal/webhooks/${id}?queued=${encodeURIComponent(eventId)}`, 303);
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated, 403);
    const id = idParam(request);
    const { eventId } = await deps.endpoints.redeliver(a.caller, id, idParam(request, 'deliveryId'));
    const { url } = await deps.endpoints.get(a.caller, id);
    await audit(deps, request, a.session, 'webhook.redeliver', `event ${eventId} to ${url}`);
    return reply.redirect(`/portal/webhooks/${id}?queued=redelivery`, 303);
  });
}

type Deliveries = Awaited<ReturnType<PortalDeps['endpoints']['deliveries']>>['deliveries'];

/** An endpoint's delivery history, each with its attempts; `action` (owners only) makes a redeliver button. */
function deliveriesTable(
  endpointId: string,
  deliveries: Deliveries,
  action: ((path: string, label: string) => Html) | null,
) {
  return html`<table>
    <caption>
      Delivery history, newest first
    </caption>
    <thead>
      <tr>
        <th scope="col">Created</th>
        <th scope="col">Event</th>
        <th scope="col">Status</th>
        <th scope="col">Attempts (answer, duration)</th>
        <th scope="col">Next attempt</th>
        <th scope="col">Redeliver</th>
      </tr>
    </thead>
    <tbody>
      ${deliveries.map(
        (d) =>
          html`<tr class="delivery">
            <td><a href="/portal/webhooks/${endpointId}/deliveries/${d.id}">${when(d.createdAt)}</a></td>
            <td>${d.eventType}<br /><code>${d.eventId}</code></td>
            <td>${DELIVERY_STATUS[d.status] ?? d.status}</td>
            <td>
              <ol>
                ${d.attempts.map(
                  (a) =>
                    html`<li class="attempt">
                      ${when(a.attemptedAt)}:
                      <strong>${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`}</strong>,
                      ${String(a.durationMs ?? '?')} ms ${a.error ? html`— ${a.error}` : ''}
                      ${a.responseBody ? html`<pre class="excerpt">${a.responseBody.slice(0, 500)}</pre>` : ''}
                    </li>`,
                )}
              </ol>
            </td>
            <td>
              ${d.nextAttemptAt ? html`<time datetime="${d.nextAttemptAt}">${when(d.nextAttemptAt)}</time>` : '—'}
            </td>
            <td>${action ? action(`deliveries/${d.id}/redeliver`, 'Redeliver') : ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
