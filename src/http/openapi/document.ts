// The one place that turns what @fastify/swagger derives from the route schemas into the published
// document: operationIds, tags, security, every answer of every operation (success schemas, the
// standard errors of each kind of route and the codes operations.ts lists), request examples, the
// resource and error schemas, and the events (`webhooks`). Route files declare only their input
// schemas and summary; nothing here changes how a request is handled.
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

import { ERROR_DOCS, type ErrorCode, errorSchema } from './error-docs.js';
import { eventSchemas, webhooksSection } from './events.js';
import { OPERATIONS } from './operations.js';
import { resourceSchemas } from './resources.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const DESCRIPTION = `Chat message delivery: queue text, template, image and document messages to phone numbers through your linked chat accounts, track their status, look up who wrote to you, and receive signed events.

**Authentication.** Every call carries your API key in the \`x-api-key\` header, without any prefix. Live keys start with \`ak_live_\`, sandbox keys with \`ak_test_\` (a simulated cycle: no real delivery, no quota). A missing, invalid or revoked key answers \`401\`.

**Errors.** Every error is JSON with an \`error\` code (\`{"error": "validation_error", "details": [{"path": "to.phoneE164", "message": "…"}]}\`); some add \`message\` or other fields. Each operation lists the codes it can answer. An unexpected failure answers \`500 {"error": "Internal server error"}\`: retrying a send with the same \`externalId\` is safe.

**Events.** On plans Basic and Pro, register an HTTPS endpoint (\`POST /webhook-endpoints\`) to receive the events of the Webhooks section, signed in \`x-svc-signature\`.

**Client.** \`@chatgate/client\` (packages/client in the repository) is a typed client generated from this document.`;

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

export const swaggerOptions: FastifyDynamicSwaggerOptions = {
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
  transformObject: (documentObject) =>
    decorateDocument((documentObject as { openapiObject: Json }).openapiObject) as never,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const camel = (s: string) => s.replace(/[-_ ]+(\w)/g, (_, c: string) => c.toUpperCase());

/** getWebhookEndpointsById-style ids for operations operations.ts does not name. */
function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith('{') ? `By-${seg.slice(1, -1)}` : seg));
  return camel([method, ...words].join('-'));
}

const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value));

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
    'Internal server error',
  ];
}

function errorResponses(codes: ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_DOCS[code]!.status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Json = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const docs = list.map((code) => ({ code, ...ERROR_DOCS[code]! }));
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

function successResponses(ok: Record<number, string | null>): Json {
  const responses: Json = {};
  for (const [status, schema] of Object.entries(ok)) {
    const description = { '200': 'OK', '201': 'Created', '202': 'Accepted', '204': 'No content' }[status] ?? 'OK';
    responses[status] = schema
      ? { description: `${description}: ${schema}`, content: { 'application/json': { schema: ref(schema) } } }
      : { description };
  }
  return responses;
}

const MULTIPART_FILE = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'At most 20 MB.' },
        },
      },
    },
  },
};

function decorateOperation(method: string, path: string, op: Json): void {
  const doc = OPERATIONS[`${method.toUpperCase()} ${path}`];
  const operator = path.startsWith('/admin/');
  op.operationId = doc?.operationId ?? derivedOperationId(method, path);
  if (!op.tags?.length) op.tags = [operator ? 'operator' : (path.split('/')[1] ?? 'api')];
  op.security ??= [operator ? { operator: [] } : { apiKey: [] }];
  if (doc?.description) op.description = op.description ? `${op.description}\n\n${doc.description}` : doc.description;
  if (path === '/media' && method === 'post') op.requestBody ??= MULTIPART_FILE;
  const media = op.requestBody?.content?.['application/json'];
  if (media && doc?.examples) media.examples = doc.examples;
  const declaredOk = Object.fromEntries(Object.entries(op.responses ?? {}).filter(([s]) => /^2\d\d$/.test(s)));
  op.responses = {
    ...(doc ? successResponses(doc.ok) : declaredOk),
    ...errorResponses([...standardErrors(path, op), ...(doc?.errors ?? [])]),
  };
}

/** The document as published: see the header of this file. Idempotent on its own output. */
export function decorateDocument(doc: Json): Json {
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const method of METHODS) if (item[method]) decorateOperation(method, path, item[method]);
  }
  const errorComponents = Object.fromEntries(
    Object.entries(ERROR_DOCS).map(([code, d]) => [d.schema, errorSchema(code, d)]),
  );
  doc.components.schemas = {
    ...doc.components.schemas,
    ...plain(resourceSchemas),
    ...errorComponents,
    ...plain(eventSchemas),
  };
  doc.webhooks = plain(webhooksSection);
  return doc;
}
