// GET /usage: this month's (or a given month's) quota use and the daily counts behind it.
import { Type } from '@sinclair/typebox';

import { MONTH_PATTERN } from '../../shared/schemas.js';
import type { UsageService } from '../../usage/usage-service.js';
import { Usage } from '../schemas/usage.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const schema = {
  operationId: 'getUsage',
  summary: 'Quota use in one UTC month (default this one), by day and by account',
  tags: ['usage'],
  security: [{ apiKey: [] }],
  querystring: Type.Object(
    { month: Type.Optional(Type.String({ pattern: MONTH_PATTERN })) },
    { additionalProperties: false },
  ),
  description:
    'Quota use in one UTC month (`month=YYYY-MM`, default the current one): `limit`, `used` and `resetsAt` are the numbers a `429 quota_exceeded` carries; `byDay` and `byAccount` count what was accepted and what reached sent, delivered, read and failed, on the UTC day it happened. Sandbox messages never count. A key scoped to one account sees only that account in `byDay` and `byAccount`, and the whole quota.',
  response: { 200: Usage },
};

export function registerUsageRoutes(app: Server, deps: { usage: UsageService }) {
  app.get('/usage', { schema }, async (request) => {
    return deps.usage.get(callerOf(request), request.query.month);
  });
}
