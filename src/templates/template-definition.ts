// POST /chat-accounts/{id}/templates: the request schema, the rules JSON Schema cannot say on its
// own (variables against parameterFormat and examples), and the provider's create payload. The
// components beyond the body (decision 0068) are template-components.ts'.
import { type Static, Type } from '@sinclair/typebox';

import type { Problem } from '../shared/errors.js';
import { LANGUAGE_PATTERN, TEMPLATE_NAME_PATTERN } from '../shared/schemas.js';
import { ComponentFields } from './template-component-fields.js';
import { aroundBody, authenticationComponents, componentProblems } from './template-components.js';

export const TEMPLATE_STATUSES = ['APPROVED', 'PENDING', 'REJECTED', 'PAUSED', 'DISABLED', 'IN_APPEAL'] as const;
/** AUTHENTICATION templates take `authentication` (the provider's preset text and a code button), no body. */
export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export const PARAMETER_FORMATS = ['NAMED', 'POSITIONAL'] as const;
export type ParameterFormat = (typeof PARAMETER_FORMATS)[number];

/** The provider's limit on BODY text. */
export const MAX_BODY_LENGTH = 1024;
export const MAX_VARIABLES = 100;

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const CreateTemplateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 512, pattern: TEMPLATE_NAME_PATTERN }),
    language: Type.String({ minLength: 2, maxLength: 20, pattern: LANGUAGE_PATTERN }),
    category: literals(TEMPLATE_CATEGORIES),
    parameterFormat: literals(PARAMETER_FORMATS),
    body: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_BODY_LENGTH,
        description: 'Required, except for an AUTHENTICATION template (which takes none).',
      }),
    ),
    examples: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            text: Type.String({ minLength: 1, maxLength: MAX_BODY_LENGTH }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_VARIABLES },
      ),
    ),
    ...ComponentFields,
  },
  { additionalProperties: false, 'x-cross-field': true },
);

/**
 * The request's presence rule JSON Schema cannot say (run beside the schema, so one answer lists
 * both): `body` is required except for an AUTHENTICATION template. Tolerates any shape.
 */
export function createRequestProblems(req: unknown): Problem[] {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) return [];
  const r = req as Record<string, unknown>;
  return r.body === undefined && r.category !== 'AUTHENTICATION' ? [{ path: 'body', message: 'is required' }] : [];
}
export type CreateTemplateRequest = Static<typeof CreateTemplateSchema>;

const NAMED_VARIABLE = /^[a-z_][a-z0-9_]*$/;
const POSITIONAL_VARIABLE = /^[1-9][0-9]*$/;

/** Distinct variable names of a text, in order of first appearance (`{{name}}` → `name`). */
export function variablesOf(text: string): string[] {
  return [...new Set([...text.matchAll(/\{\{([^{}]*)\}\}/g)].map((m) => m[1]!))];
}

/** The number of distinct variables of a BODY text (the Template's parameterCount). */
export const parameterCountOf = (text: string) => variablesOf(text).length;

/** What the spec's rules say about a definition the schema accepted: one problem per path. */
export function checkDefinition(req: CreateTemplateRequest): Problem[] {
  const parts = componentProblems(req);
  return req.body === undefined ? parts : [...bodyProblems({ ...req, body: req.body }), ...parts];
}

function bodyProblems(req: CreateTemplateRequest & { body: string }): Problem[] {
  const problems: Problem[] = [];
  const vars = variablesOf(req.body);
  const bad = vars.filter((v) => !NAMED_VARIABLE.test(v) && !POSITIONAL_VARIABLE.test(v));
  const stray = req.body.replace(/\{\{[^{}]*\}\}/g, '');
  if (bad.length > 0)
    problems.push({
      path: 'body',
      message: `has invalid variables ${bad.map((v) => `{{${v}}}`).join(', ')}: use {{name}} (lower-case letters, digits, underscores) or {{1}}, {{2}}…`,
    });
  else if (stray.includes('{{') || stray.includes('}}'))
    problems.push({ path: 'body', message: 'has unbalanced {{ or }}' });
  if (problems.length > 0) return problems;
  if (vars.length > MAX_VARIABLES) return [{ path: 'body', message: `has more than ${MAX_VARIABLES} variables` }];

  const named = vars.filter((v) => NAMED_VARIABLE.test(v));
  const positional = vars.filter((v) => POSITIONAL_VARIABLE.test(v));
  if (named.length > 0 && positional.length > 0)
    return [{ path: 'body', message: 'must not mix named ({{name}}) and positional ({{1}}) variables' }];
  if (req.parameterFormat === 'NAMED' && positional.length > 0)
    problems.push({ path: 'parameterFormat', message: 'is NAMED but body uses positional variables ({{1}})' });
  if (req.parameterFormat === 'POSITIONAL' && named.length > 0)
    problems.push({ path: 'parameterFormat', message: 'is POSITIONAL but body uses named variables ({{name}})' });
  if (positional.length > 0) {
    const numbers = positional.map(Number).sort((a, b) => a - b);
    if (numbers.some((n, i) => n !== i + 1))
      problems.push({
        path: 'body',
        message: `positional variables must be numbered 1 to ${numbers.length} without gaps`,
      });
  }

  const examples = req.examples ?? [];
  const seen = new Set<string>();
  examples.forEach((e, i) => {
    if (!vars.includes(e.name))
      problems.push({
        path: `examples.${i}.name`,
        message: `is not a variable of body (${vars.length > 0 ? vars.map((v) => `{{${v}}}`).join(', ') : 'body has none'})`,
      });
    else if (seen.has(e.name)) problems.push({ path: `examples.${i}.name`, message: 'has an example already' });
    seen.add(e.name);
  });
  const missing = vars.filter((v) => !seen.has(v));
  if (missing.length > 0)
    problems.push({
      path: 'examples',
      message: `must give one example per variable; missing ${missing.map((v) => `{{${v}}}`).join(', ')}`,
    });
  return problems;
}

/** The BODY component as the provider takes (and later returns) it. */
function bodyComponent(req: CreateTemplateRequest & { body: string }): Record<string, unknown> {
  const vars = variablesOf(req.body);
  const example = (name: string) => req.examples?.find((e) => e.name === name)?.text ?? '';
  if (vars.length === 0) return { type: 'BODY', text: req.body };
  if (req.parameterFormat === 'NAMED') {
    return {
      type: 'BODY',
      text: req.body,
      example: { body_text_named_params: vars.map((v) => ({ param_name: v, example: example(v) })) },
    };
  }
  const ordered = [...vars].sort((a, b) => Number(a) - Number(b));
  return { type: 'BODY', text: req.body, example: { body_text: [ordered.map(example)] } };
}

/** The provider's create payload (checked definitions only). */
export function createPayload(req: CreateTemplateRequest): Record<string, unknown> {
  return {
    name: req.name,
    language: req.language,
    category: req.category,
    parameter_format: req.parameterFormat,
    components: templateComponents(req),
  };
}

/** The template's components in the provider's form: the body with what surrounds it, or an authentication template's. */
export function templateComponents(req: CreateTemplateRequest): Record<string, unknown>[] {
  if (req.authentication) return authenticationComponents(req.authentication);
  const body = bodyComponent({ ...req, body: req.body ?? '' });
  return aroundBody(req, req.parameterFormat === 'NAMED', body);
}
