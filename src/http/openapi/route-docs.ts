// How to document a route (the published /openapi.json is collected from the routes; nothing else
// lists operations):
//
//   app.get('/things/:id', {
//     schema: {
//       operationId: 'getThing',                       // unique, camelCase: the client's method name
//       summary: 'One thing',                           // one line; `description` for more (Markdown)
//       tags: ['things'], security: [{ apiKey: [] }],   // operator routes: ['operator'], [{ operator: [] }]
//       params: Type.Object({ id: Uuid() }),            // input schemas as usual (querystring, body)
//       response: { 200: Thing },                       // every success status, each a component (below)
//       'x-errors': ['thing_not_found'],                // codes beyond the standard ones (error-docs.ts)
//       'x-examples': { one: { summary: 'A thing', value: { name: 'x' } } }, // JSON bodies: at least one
//     },
//   }, handler);
//
// A component is a TypeBox schema made with `component('Thing', Type.Object({...}))` in the schema
// module of its capability (src/http/schemas/): it is published as components.schemas.Thing, and a
// component nested in another is referenced by `$ref`. A route answering without a body declares
// `204: NoContent`, one answering with a file's bytes `200: FileBody`. The response schemas also serialize the answers (fast-json-stringify): a field
// the schema does not declare is dropped, so declare every field the service returns (open-ended
// objects: `additionalProperties: true`; a field that can be null: `Nullable(...)`, or a null string
// is sent as ""); the test harness fails any answer that lost or changed a value in serialization
// (src/http/response-check.ts). A new error code goes in error-docs.ts. A body Fastify does not
// parse (multipart) is documented with 'x-request-body' (see media-routes.ts). document.ts adds
// the standard errors of every operation (validation, authentication, body limits, 500), the
// error and event schemas.
import { type TSchema, Type } from '@sinclair/typebox';

import type { ErrorCode } from './error-docs.js';

type Example = { summary: string; value: unknown };

declare module 'fastify' {
  interface FastifySchema {
    /** The error codes this operation answers beyond the standard ones (document.ts). */
    'x-errors'?: readonly ErrorCode[];
    /** Named examples of the JSON request body. */
    'x-examples'?: Record<string, Example>;
    /** The request body as documented, for a route Fastify does not parse (multipart uploads). */
    'x-request-body'?: Record<string, unknown>;
  }
}

/** A schema published as components.schemas[name] and referenced by `$ref` wherever it is used. */
export function component<T extends TSchema>(name: string, schema: T): T {
  return { ...schema, $id: name };
}

/** The answer of a route that answers without a body (204). */
export const NoContent = Type.Unsafe<void>({ type: 'null', description: 'No content' });

/**
 * The answer of a route that answers with a file's bytes (its type in Content-Type), not JSON: no
 * schema in the document, and the bytes are sent as they are (a Buffer is never serialized).
 */
export const FileBody = Type.Unsafe<Buffer>({ type: 'null', description: "The file's bytes" });

/** The shape every component has after component(): an `$id` naming it. */
export const componentName = (schema: unknown): string | undefined =>
  typeof schema === 'object' && schema !== null && typeof (schema as { $id?: unknown }).$id === 'string'
    ? (schema as { $id: string }).$id
    : undefined;

/** A plain JSON copy of a schema, its nested components as references, without its own `$id`. */
export function asPublished(schema: unknown, top = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => asPublished(s));
  if (typeof schema !== 'object' || schema === null) return schema;
  const name = componentName(schema);
  if (name !== undefined && !top) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k, v]) => k !== '$id' && v !== undefined)
      .map(([k, v]) => [k, asPublished(v)]),
  );
}
