// The template catalog of an account: GET (list, live from the provider) and POST (create).
import { Type } from '@sinclair/typebox';

import { Uuid } from '../../shared/schemas.js';
import { CreateTemplateSchema, TEMPLATE_STATUSES } from '../../templates/template-definition.js';
import type { TemplateService } from '../../templates/template-service.js';
import type { ErrorCode } from '../openapi/error-docs.js';
import { Template, TemplatePage } from '../schemas/templates.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

export function registerTemplateRoutes(app: Server, deps: { templates: TemplateService }) {
  const common = { tags: ['templates'], security: [{ apiKey: [] }], params: Type.Object({ accountId: Uuid() }) };
  const gate: ErrorCode[] = [
    'key_scope_violation',
    'account_not_found',
    'feature_not_available',
    'template_access_insufficient',
    'template_management_unavailable',
    'provider_rate_limited',
    'provider_unavailable',
    'provider_unreachable',
  ];

  app.get(
    '/chat-accounts/:accountId/templates',
    {
      schema: {
        ...common,
        operationId: 'listTemplates',
        summary: 'The template catalog of an official account, read live from the provider',
        querystring: Type.Object(
          {
            status: Type.Optional(Type.Union(TEMPLATE_STATUSES.map((s) => Type.Literal(s)))),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
            cursor: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: TemplatePage },
        'x-errors': [...gate, 'invalid_cursor'],
      },
    },
    async (request) => {
      return deps.templates.list(callerOf(request), request.params.accountId, request.query);
    },
  );

  app.post(
    '/chat-accounts/:accountId/templates',
    {
      schema: {
        ...common,
        operationId: 'createTemplate',
        summary:
          'Create a template (a body, with header, footer and buttons; or authentication; or a carousel) at the provider; it stays PENDING for review',
        body: CreateTemplateSchema,
        response: { 201: Template },
        'x-errors': [...gate, 'sandbox_not_supported', 'template_already_exists', 'template_rejected_by_provider'],
        'x-examples': {
          positional: {
            summary: 'A utility template with one positional value',
            value: {
              name: 'order_shipped',
              language: 'en_US',
              category: 'UTILITY',
              parameterFormat: 'POSITIONAL',
              body: 'Your order {{1}} has shipped.',
              examples: [{ name: '1', text: '1042' }],
            },
          },
        },
      },
    },
    async (request, reply) => {
      const template = await deps.templates.create(callerOf(request), request.params.accountId, request.body);
      return reply.code(201).send(template);
    },
  );
}
