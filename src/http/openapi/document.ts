// Turns what @fastify/swagger collects from the route schemas into the published document. Every
// operation's documentation is declared on its route (how: route-docs.ts): operationId, summary,
// tags, security, input schemas, success answers (components), its error codes ('x-errors') and
// request examples ('x-examples'). Here only what is the same for all: each route's components
// gathered into components.schemas, the standard errors of each kind of route, the error schemas
// and the events (`webhooks`). Nothing here changes how a request is handled.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

import { ERROR_DOCS, type ErrorCode, errorSchema } from './error-docs.js';
import { eventSchemas, webhooksSection } from './events.js';
import { asPublished, componentName } from './route-docs.js';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const DESCRIPTION = `Chat message delivery: queue text, template, image and document messages to phone numbers through your linked chat accounts, track their status, look up who wrote to you, and receive signed events.

**Authentication.** Every call carries your API key in the \`x-api-key\` header, without any prefix. Live keys start with \`ak_live_\`, sandbox keys with \`ak_test_\` (a simulated cycle: no real delivery, no quota). A missing, invalid or revoked key answers \`401\`.

**Errors.** Every error is JSON with an \`error\` code (\`{"error": "validation_error", "details": [{"path": "to.phoneE164", "message": "…"}]}\`); some add \`message\` or other fields. Each operation lists the codes it can answer. An unexpected failure answers \`500 {"error": "Internal server error"}\`: retrying a send with the same \`externalId\` is safe.

**Events.** On plans Basic and Pro, register an HTTPS endpoint (\`POST /webhook-endpoints\`) to receive the events of the Webhooks section, signed in \`x-svc-signature\`.

**Client.** \`@chatgate/client\` (packages/client in the repository) is a typed client generated from this document: \`ChatGate\` for this API, \`ChatGateOperator\` for the operator API, \`constructEvent\` for the events.`;

const TAGS = [
  { name: 'messages', description: 'Send one message, read messages.' },
  { name: 'broadcasts', description: 'One content to up to 5,000 recipients (plans Basic and Pro).' },
  { name: 'media', description: 'Upload images and documents to send by mediaId.' },
  { name: 'chat accounts', description: 'Your linked chat accounts.' },
  { name: 'inbound', description: 'Who wrote to you, the inbox, inbox filters and forwarding rules.' },
  {
    name: 'suppressions',
    description:
      'Numbers that opted out of broadcasts and marketing templates, per chat account, and opt-out keywords.',
  },
  { name: 'webhooks', description: 'Endpoints that receive the events.' },
  { name: 'templates', description: 'The template catalog of an official account (Starter and up).' },
  { name: 'usage', description: 'Quota use per month, by day and by account (sandbox excluded).' },
  { name: 'events', description: 'What ChatGate POSTs to your webhook endpoints, signed with x-svc-signature.' },
  { name: 'operator', description: 'The operator API (Authorization: Bearer ADMIN_TOKEN); not for customers.' },
];

/** The options of @fastify/swagger for one server: its components are gathered from its routes. */
export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  const components = new Map<string, Json>();
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ChatGate API',
        version: '0.1.0',
        description: DESCRIPTION,
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      servers: [{ url: 'http://127.0.0.1:3000', description: 'A local service (npm start)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Your API key, without a prefix.' },
          operator: { type: 'http', scheme: 'bearer', description: 'The operator token (ADMIN_TOKEN).' },
        },
      },
    },
    // A component nested in a route's schema is referenced by its own name (not def-N).
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => componentName(json) ?? `def-${i}` },
    transform: ({ schema, url }) => ({ schema: schema && withComponentRefs(schema as Json, components), url }),
    transformObject: (documentObject) =>
      decorateDocument((documentObject as { openapiObject: Json }).openapiObject, components) as never,
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/**
 * Every component (a schema with an `$id`, see route-docs.ts) found in `schema`, gathered into
 * `into` as published: its nested components replaced by references. One name, one schema.
 */
function gatherComponents(schema: unknown, into: Map<string, Json>): void {
  if (typeof schema !== 'object' || schema === null) return;
  for (const value of Object.values(schema)) gatherComponents(value, into);
  const name = componentName(schema);
  if (name === undefined) return;
  const published = asPublished(schema, true) as Json;
  const known = into.get(name);
  if (known && JSON.stringify(known) !== JSON.stringify(published))
    throw new Error(`OpenAPI: two different schemas are named ${name}`);
  into.set(name, published);
}

/** The route schema as documented: each answer that is a component becomes a reference to it. */
function withComponentRefs(schema: Json, components: Map<string, Json>): Json {
  if (!schema.response) return schema;
  const response: Json = {};
  for (const [status, answer] of Object.entries(schema.response as Json)) {
    gatherComponents(answer, components);
    const name = componentName(answer);
    response[status] = name === undefined ? answer : ref(name);
  }
  return { ...schema, response };
}

function standardErrors(path: string, op: Json): ErrorCode[] {
  const operator = path.startsWith('/admin/');
  const takesInput = (op.parameters?.length ?? 0) > 0 || op.requestBody !== undefined;
  return [
    ...(takesInput ? (['validation_error'] as const) : []),
    'bad_request',
    ...(operator
      ? (['unauthorized', 'too_many_attempts'] as const)
      : (['Missing x-api-key header', 'Invalid API key'] as const)),
    ...(op.requestBody !== undefined ? (['payload_too_large', 'unsupported_media_type'] as const) : []),
    'database_unavailable',
    'Internal server error',
  ];
}

function errorResponses(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_DOCS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const docs = list.map((code) => ({ code, ...ERROR_DOCS[code] }));
    const headers = Object.assign({}, ...docs.map((d) => d.headers ?? {}));
    responses[String(status)] = {
      description: docs.map((d) => `\`${d.code}\`: ${d.description}`).join('\n\n'),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        'application/json': {
          schema: docs.length === 1 ? ref(docs[0]!.schema) : { anyOf: docs.map((d) => ref(d.schema)) },
          examples: Object.fromEntries(
            docs.map((d) => [d.schema, { summary: d.code, value: d.example ?? { error: d.code } }]),
          ),
        },
      },
    };
  }
  return responses;
}

const SUCCESS: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No content' };

/** The 2xx answers the route declared: a component by reference, or no body. */
function successResponses(declared: Json): Json {
  const responses: Json = {};
  for (const [status, answer] of Object.entries(declared).filter(([s]) => /^2\d\d$/.test(s))) {
    const label = SUCCESS[status] ?? 'OK';
    const schema = (answer as Json).content?.['application/json']?.schema;
    const name = typeof schema?.$ref === 'string' ? schema.$ref.split('/').pop() : undefined;
    responses[status] = schema
      ? { description: name ? `${label}: ${name}` : label, content: { 'application/json': { schema } } }
      : { description: label };
  }
  return responses;
}

function decorateOperation(path: string, op: Json): void {
  const errors = (op['x-errors'] ?? []) as ErrorCode[];
  const examples = op['x-examples'];
  if (op['x-request-body']) op.requestBody ??= op['x-request-body'];
  for (const key of ['x-errors', 'x-examples', 'x-request-body']) delete op[key];
  const media = op.requestBody?.content?.['application/json'];
  if (media && examples) media.examples = examples;
  op.responses = {
    ...successResponses(op.responses ?? {}),
    ...errorResponses([...standardErrors(path, op), ...errors]),
  };
}

/** The document as published: see the header of this file. */
export function decorateDocument(doc: Json, components: Map<string, Json>): Json {
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const method of METHODS) if (item[method]) decorateOperation(path, item[method]);
  }
  const errorComponents = Object.fromEntries(
    Object.entries(ERROR_DOCS).map(([code, d]) => [d.schema, errorSchema(code, d)]),
  );
  // Sorted by name: the order does not depend on the order routes are registered in.
  const resources = Object.fromEntries([...components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const hoisted = Object.entries(doc.components.schemas ?? {}).filter(([name]) => !components.has(name));
  doc.components.schemas = {
    ...resources,
    ...Object.fromEntries(hoisted),
    ...errorComponents,
    ...plain(eventSchemas),
  };
  doc.webhooks = plain(webhooksSection);
  return doc;
}

const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value));
