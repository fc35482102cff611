// The answers about suppression lists and opt-out keywords (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { SUPPRESSION_SOURCES } from '../../shared/vocab.js';
import { component, Enum, Id, Page, Time } from './common.js';

export const Suppression = component(
  'Suppression',
  Type.Object({
    phone: Type.String({ description: 'E.164, or a business-scoped user id for an entry kept under the id.' }),
    reason: Type.String(),
    source: Enum(SUPPRESSION_SOURCES),
    since: Time(),
  }),
);

export const SuppressionPage = component('SuppressionPage', Page('suppressions', Suppression));

export const OptOutKeywords = component(
  'OptOutKeywords',
  Type.Object({ chatAccountId: Id(), keywords: Type.Array(Type.String()) }),
);
