// The answers of the template catalog (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { component, Enum, Nullable, NullableTime, Page } from './common.js';

export const Template = component(
  'Template',
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    language: Type.String(),
    category: Type.String(),
    status: Type.String(),
    rejectedReason: Nullable(Type.String()),
    parameterFormat: Enum(['NAMED', 'POSITIONAL']),
    parameterCount: Type.Integer(),
    components: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description: 'As the provider returns them.',
    }),
    qualityScore: Type.Optional(Type.Object({ score: Type.String(), date: NullableTime() })),
  }),
);

export const TemplatePage = component('TemplatePage', Page('templates', Template));
