// The rules JSON Schema cannot say on its own (which content field goes with content.type, url
// xor mediaId, URL safety, sizes, duplicate recipients), checked by one hook for every route
// whose body schema carries the `x-cross-field` marker. One answer lists the schema's problems
// and the rule's together.
import type { TSchema } from '@sinclair/typebox';

import { broadcastProblems, BroadcastRequestSchema } from '../broadcasts/broadcast-request.js';
import { crossFieldProblems, SendRequestSchema } from '../messages/send-request.js';
import { errors, type Problem } from '../shared/errors.js';
import { createRequestProblems, CreateTemplateSchema } from '../templates/template-definition.js';
import type { Server } from './server.js';
import { toProblems } from './validation.js';

type Rule = (body: unknown) => Problem[];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by registerCrossFieldValidation on routes whose body schema carries the marker. */
    crossField?: Rule;
  }
}

function rulesBySchema(opts: { allowPrivateUrls: boolean }): ReadonlyMap<TSchema, Rule> {
  return new Map<TSchema, Rule>([
    [SendRequestSchema, (body) => crossFieldProblems(body, opts)],
    [BroadcastRequestSchema, (body) => broadcastProblems(body, opts)],
    [CreateTemplateSchema, createRequestProblems],
  ]);
}

/**
 * Call before the scope's routes are added. A marked route has its schema problems attached
 * rather than thrown (attachValidation), and a preHandler answers them with the rule's.
 */
export function registerCrossFieldValidation(scope: Server, opts: { allowPrivateUrls: boolean }): void {
  const rules = rulesBySchema(opts);
  scope.addHook('onRoute', (route) => {
    const body = route.schema?.body as TSchema | undefined;
    if (body?.['x-cross-field'] !== true) return;
    const rule = rules.get(body);
    if (!rule) throw new Error(`${route.method} ${route.url}: its body schema is marked x-cross-field but has no rule`);
    route.attachValidation = true;
    route.config = { ...route.config, crossField: rule };
  });
  scope.addHook('preHandler', async (request) => {
    const rule = request.routeOptions.config.crossField;
    if (!rule) return;
    const problems = [...toProblems((request.validationError?.validation ?? []) as never), ...rule(request.body)];
    if (problems.length > 0) throw errors.validation(problems);
  });
}
