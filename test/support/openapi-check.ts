// Checks an answer against the service's own OpenAPI document (its /openapi.json): the status must
// be documented for the operation, and a JSON body must match that status's schema (Ajv, JSON
// Schema 2020-12 as OpenAPI 3.1 uses). Routes the document hides (/healthz, /docs, the provider's
// callbacks) and unknown routes are not checked.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;
type Route = { method: string; template: string; pattern: RegExp; operation: Json };
type Checker = { routes: Route[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> };

const checkers = new Map<string, Promise<Checker>>();
/** By the document's text: every server of a test file serves the same one, compiled once. */
const byDocument = new Map<string, Checker>();

async function load(url: string): Promise<Checker> {
  // Not every server the tests call is ours (the emulator, a receiver): those have no document.
  const res = await fetch(`${url}/openapi.json`);
  const text = res.ok ? await res.text() : '{"paths":{}}';
  let checker = byDocument.get(text);
  if (!checker) byDocument.set(text, (checker = compile(JSON.parse(text) as Json)));
  return checker;
}

function compile(doc: Json): Checker {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  if (doc.openapi === undefined) return { routes: [], ajv, validators: new Map() };
  ajv.addSchema(doc, 'openapi');
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+');
    for (const [method, operation] of Object.entries(item as Json))
      routes.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source}$`), operation });
  }
  // Literal segments first: /messages/broadcast before /messages/{id}.
  routes.sort((a, b) => a.template.split('{').length - b.template.split('{').length);
  return { routes, ajv, validators: new Map() };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Throws when the answer is not what the document says this operation answers. */
export async function checkAgainstDocument(
  url: string,
  method: string,
  path: string,
  reply: { status: number; body: unknown; contentType: string | null },
): Promise<void> {
  if (!checkers.has(url)) checkers.set(url, load(url));
  const checker = await checkers.get(url)!;
  const pathname = path.split('?')[0]!;
  const route = checker.routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(pathname));
  if (!route) return;
  const what = `${method} ${path} answered ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 500)}`;
  const responses = route.operation.responses as Json;
  const key = [String(reply.status), `${String(reply.status)[0]}XX`, 'default'].find((k) => responses[k]);
  if (!key) throw new Error(`OpenAPI: ${what}: status ${reply.status} is not documented for ${route.template}`);
  const schema = responses[key].content?.['application/json']?.schema;
  if (!schema) {
    if (reply.body !== null && reply.body !== '')
      throw new Error(`OpenAPI: ${what}: the document says this answer has no body`);
    return;
  }
  if (!reply.contentType?.startsWith('application/json'))
    throw new Error(`OpenAPI: ${what}: content-type ${reply.contentType}, documented application/json`);
  const ref = `openapi#/${pointer('paths', route.template, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema')}`;
  let validate = checker.validators.get(ref);
  if (!validate) {
    validate = checker.ajv.compile({ $ref: ref });
    checker.validators.set(ref, validate);
  }
  if (!validate(reply.body))
    throw new Error(
      `OpenAPI: ${what}: does not match the documented schema of ${route.template} ${key}: ${checker.ajv.errorsText(validate.errors, { separator: '; ' })}`,
    );
}
