// Webhook pages of issue #37 (decision 0074): an endpoint's deliveries filtered by event type and
// status, and the event catalogue: each event type with its summary, what it carries (the
// OpenAPI document's schema of it, openapi/events.ts) and an example body.
import type { FastifyInstance, FastifyRequest } from 'fastify';

import type { Caller } from '../../auth/caller.js';
import type { Session } from '../../portal/session-service.js';
import { EVENT_TYPES } from '../../shared/vocab.js';
import { eventSchemas, webhooksSection } from '../openapi/events.js';
import type { PortalDeps } from './deps.js';
import { type Html, html } from './html.js';
import type { PageQuery } from './input.js';
import { page, type PageContext } from './layout.js';
import { sendPage } from './reply.js';

type Allowed = (
  deps: PortalDeps,
  request: FastifyRequest,
) => Promise<{ session: Session; caller: Caller; ctx: PageContext; gated: Html | null }>;

/** A delivery's status in the filter's words (the same as the list's). */
const STATUS_WORDS: Record<string, string> = {
  pending: 'waiting to be sent (retrying)',
  succeeded: 'delivered',
  failed: 'failed: no more retries',
};

export type DeliveryFilter = { eventType?: string; status?: string };

/** The deliveries filter of the endpoint page's query: only known values, anything else is no filter. */
export function deliveryFilterOf(q: PageQuery): DeliveryFilter {
  const eventType = (EVENT_TYPES as readonly string[]).includes(q.eventType ?? '') ? q.eventType : undefined;
  const status = Object.hasOwn(STATUS_WORDS, q.status ?? '') ? q.status : undefined;
  return { eventType, status };
}

export function deliveryFilterForm(endpointId: string, f: DeliveryFilter): Html {
  const option = (value: string, label: string, current: string | undefined) =>
    html`<option value="${value}" ${current === value ? html`selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/portal/webhooks/${endpointId}" class="filters" aria-label="Filter deliveries">
    <div>
      <label for="f-event">Event type</label>
      <select id="f-event" name="eventType">
        ${option('', 'Any', f.eventType ?? '')} ${EVENT_TYPES.map((t) => option(t, t, f.eventType))}
      </select>
    </div>
    <div>
      <label for="f-status">Delivery status</label>
      <select id="f-status" name="status">
        ${option('', 'Any', f.status ?? '')}
        ${Object.entries(STATUS_WORDS).map(([v, label]) => option(v, label, f.status))}
      </select>
    </div>
    <div><button type="submit">Filter deliveries</button></div>
  </form>`;
}

type Json = Record<string, unknown>;

const SAMPLE_STRINGS: Record<string, string> = {
  uuid: '9d4b1a2c-5e6f-4a70-8b91-c2d3e4f5a6b7',
  'date-time': '2026-06-01T10:00:00.000Z',
};

/**
 * An example value of a schema, for an event the document gives no hand-written example of: each
 * required field with a value of its type (the first of an enum, a constant as it is). A reference
 * to another schema is left out (the API reference at /docs has it).
 */
export function exampleOf(schema: Json, name = ''): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return exampleOf(schema.anyOf[0] as Json, name);
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const required = (schema.required ?? []) as string[];
      return Object.fromEntries(required.filter((k) => props[k]).map((k) => [k, exampleOf(props[k]!, k)]));
    }
    case 'array':
      return schema.items ? [exampleOf(schema.items as Json, name)] : [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      if (typeof schema.format === 'string' && SAMPLE_STRINGS[schema.format]) return SAMPLE_STRINGS[schema.format];
      if (schema.pattern === '^evt_') return 'evt_0b7e6a53-3f9c-4a4e-9d1e-8f2f0b1f6b10';
      if (name === 'from') return '+15551234567';
      return name ? `<${name}>` : 'text';
    default:
      return null;
  }
}

type Entry = { type: string; summary: string; description: string; schema: Json; example: unknown; given: boolean };

/** The catalogue from the OpenAPI document's webhooks section and event schemas (the published ones). */
export function eventCatalogue(): Entry[] {
  return Object.entries(webhooksSection).map(([type, w]) => {
    const media = w.post.requestBody.content['application/json'] as { schema: { $ref: string }; example?: unknown };
    const schema = eventSchemas[media.schema.$ref.split('/').pop()!]!;
    const example = media.example ?? exampleOf(schema);
    return {
      type,
      summary: w.post.summary,
      description: String(schema.description ?? ''),
      schema,
      example,
      given: media.example !== undefined,
    };
  });
}

function cataloguePage(ctx: PageContext): Html {
  const entries = eventCatalogue();
  return page(
    ctx,
    'Webhook events',
    html`<p>
        Each event is POSTed as JSON to every active endpoint subscribed to its type, signed in
        <code>x-svc-signature</code>, with its type in <code>x-svc-event</code> and its id in
        <code>x-svc-event-id</code> (deduplicate on it: retries keep it). Receivers ignore fields and types they do not
        know. The full reference, with the schemas each refers to, is at <a href="/docs">the API reference</a>.
      </p>
      <nav aria-label="Event types">
        <ul>
          ${entries.map((e) => html`<li><a href="#ev-${e.type.replace('.', '-')}">${e.type}</a></li>`)}
        </ul>
      </nav>
      ${entries.map(
        (e) =>
          html`<section class="card event" id="ev-${e.type.replace('.', '-')}" aria-labelledby="h-${e.type}">
            <h2 id="h-${e.type}"><code>${e.type}</code>: ${e.summary}</h2>
            <p>${e.description}</p>
            <h3>Example</h3>
            ${e.given ? '' : html`<p class="hint">Built from the schema: each required field with a sample value.</p>`}
            <pre class="example" tabindex="0" aria-label="Example of ${e.type}">
${JSON.stringify(e.example, null, 2)}</pre>
            <details>
              <summary>Schema of ${e.type}</summary>
              <pre class="schema" tabindex="0" aria-label="Schema of ${e.type}">
${JSON.stringify(e.schema, null, 2)}</pre>
            </details>
          </section>`,
      )}
      <p><a href="/portal/webhooks">Webhook endpoints</a></p>`,
  );
}

export function registerEventCatalogue(app: FastifyInstance, deps: PortalDeps, allowed: Allowed): void {
  app.get('/webhooks/events', async (request, reply) => {
    const a = await allowed(deps, request);
    if (a.gated) return sendPage(reply, a.gated);
    return sendPage(reply, cataloguePage(a.ctx));
  });
}
