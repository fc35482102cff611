// GET /usage: this month's (or a given month's) quota use and the daily counts behind it.
import { Type } from '@sinclair/typebox';

import { MONTH_PATTERN } from '../../shared/schemas.js';
import type { UsageService } from '../../usage/usage-service.js';
import type { Server } from '../server.js';
import { callerOf } from '../server.js';

const schema = {
  summary: 'Quota use in one UTC month (default this one), by day and by account',
  tags: ['usage'],
  security: [{ apiKey: [] }],
  querystring: Type.Object(
    { month: Type.Optional(Type.String({ pattern: MONTH_PATTERN })) },
    { additionalProperties: false },
  ),
};

export function registerUsageRoutes(app: Server, deps: { usage: UsageService }) {
  app.get('/usage', { schema }, async (request) => {
    return deps.usage.get(callerOf(request), request.query.month);
  });
}
