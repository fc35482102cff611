// Request validation and response serialization. Validation: two Ajv instances (bodies as sent;
// query strings and path params coerced from text), every problem collected and answered as
// validation_error with details[{path,message}].
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';

import { type Problem } from '../shared/errors.js';
import { PATTERN_MESSAGES } from '../shared/schemas.js';

function makeAjv(coerce: boolean) {
  const ajv = new Ajv.default({
    allErrors: true,
    coerceTypes: coerce,
    useDefaults: false,
    removeAdditional: false,
    strict: false,
    allowUnionTypes: true,
  });
  addFormats.default(ajv, ['date-time', 'uri', 'email']);
  ajv.addKeyword('x-cross-field'); // read by the cross-field hook (cross-field.ts), not by Ajv
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);

// A validator is a function of its schema's JSON alone; Fastify hands each server its own copy of a
// route's schema, so the compiled function is kept by the schema's text: a second server in the
// process (the API and the status server, the tests' many) compiles nothing again. Bounded by the
// routes' schemas, a few hundred.
const compiled = { body: new Map<string, Validator>(), text: new Map<string, Validator>() };
type Validator = ReturnType<FastifySchemaCompiler<unknown>>;

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const kind = httpPart === 'body' ? 'body' : 'text';
  const key = JSON.stringify(schema);
  let validate = compiled[kind].get(key);
  if (!validate) {
    validate = (kind === 'body' ? bodyAjv : textAjv).compile(schema as object) as Validator;
    compiled[kind].set(key, validate);
  }
  return validate;
};

function joinPath(instancePath: string, extra?: string): string {
  const parts = instancePath
    .split('/')
    .filter((p) => p !== '')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.join('.');
}

function describe(e: ErrorObject): Problem | null {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { path: joinPath(e.instancePath, String(p.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { path: joinPath(e.instancePath, String(p.additionalProperty)), message: 'is not a known field' };
    case 'type':
      return { path: joinPath(e.instancePath), message: `must be ${String(p.type).replace(',', ' or ')}` };
    case 'minLength':
      return {
        path: joinPath(e.instancePath),
        message: p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`,
      };
    case 'maxLength':
      return { path: joinPath(e.instancePath), message: `must be at most ${String(p.limit)} characters` };
    case 'pattern':
      return {
        path: joinPath(e.instancePath),
        message: PATTERN_MESSAGES[String(p.pattern)] ?? `must match ${String(p.pattern)}`,
      };
    case 'minItems':
      return {
        path: joinPath(e.instancePath),
        message: p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} items`,
      };
    case 'maxItems':
      return { path: joinPath(e.instancePath), message: `must have at most ${String(p.limit)} items` };
    case 'const':
      return { path: joinPath(e.instancePath), message: `must be ${JSON.stringify(p.allowedValue)}` };
    case 'enum':
      return {
        path: joinPath(e.instancePath),
        message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'format':
      return {
        path: joinPath(e.instancePath),
        message: p.format === 'date-time' ? 'must be an ISO 8601 timestamp' : `must be a valid ${String(p.format)}`,
      };
    case 'if':
    case 'anyOf':
    case 'oneOf':
      return null; // the branch errors already say what is wrong
    default:
      return { path: joinPath(e.instancePath), message: e.message ?? 'is invalid' };
  }
}

/**
 * Ajv errors as the spec's details: one problem per path. Branches of a union at one path
 * (literal alternatives, "or null") fold into a single message.
 */
export function toProblems(errs: readonly ErrorObject[]): Problem[] {
  const byPath = new Map<string, { problem: Problem; allowed: unknown[] }>();
  for (const e of errs) {
    const d = describe(e);
    if (!d) continue;
    const entry = byPath.get(d.path);
    const allowed = e.keyword === 'const' ? [(e.params as { allowedValue: unknown }).allowedValue] : [];
    if (!entry) {
      byPath.set(d.path, { problem: d, allowed });
      continue;
    }
    entry.allowed.push(...allowed);
    if (entry.allowed.length > 1)
      entry.problem = {
        path: d.path,
        message: `must be one of ${entry.allowed.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    else if (entry.problem.message === 'must be null') entry.problem = d; // the non-null branch says more
  }
  return [...byPath.values()].map((v) => v.problem);
}

// Response serializers, kept by schema text for the same reason as the validators above (Fastify's
// own compiler, fast-json-stringify, with Fastify's defaults: no shared schemas, no options).
const serializers = new Map<string, (doc: unknown) => string>();

export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  const key = JSON.stringify(schema);
  let serialize = serializers.get(key);
  if (!serialize) {
    serialize = fastJsonStringify(schema as Schema);
    serializers.set(key, serialize);
  }
  return serialize;
};
