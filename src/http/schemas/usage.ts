// The answers about quota use: GET /usage and the operator's GET /admin/customers/{id}/usage
// (components, see src/http/openapi/route-docs.ts).
import { Type } from '@sinclair/typebox';

import { component, Enum, Id, Time } from './common.js';

const PLAN = ['free', 'starter', 'basic', 'pro'];

/** The counters of GET /usage (sandbox never counted). */
const UsageCounters = {
  accepted: Type.Integer({ description: 'Messages accepted (quota charged), on the day of the charge.' }),
  sent: Type.Integer({ description: 'Messages that reached sent that day (UTC, provider time when known).' }),
  delivered: Type.Integer({ description: 'Messages that reached delivered that day.' }),
  read: Type.Integer({ description: 'Messages that reached read that day.' }),
  failed: Type.Integer({ description: 'Messages that failed that day.' }),
};

/** GET /usage's counts of priced messages (issue #25). */
const PricingCounts = {
  billable: Type.Integer({ description: 'Priced messages whose receipt said `billable: true`.' }),
  free: Type.Integer({ description: 'Priced messages whose receipt said `billable: false`.' }),
  unknown: Type.Integer({ description: 'Priced messages whose receipt had no `billable` flag.' }),
};

export const CustomerUsage = component(
  'CustomerUsage',
  Type.Object(
    {
      customerId: Id(),
      month: Type.String({ description: 'The UTC month, YYYY-MM.' }),
      plan: Enum(PLAN),
      limit: Type.Integer(),
      used: Type.Integer(),
      remaining: Type.Integer(),
      resetsAt: Time('When the quota renews: the first instant of the next UTC month.'),
    },
    { additionalProperties: true },
  ),
);

export const Usage = component(
  'Usage',
  Type.Object(
    {
      month: Type.String({ description: 'The UTC month, YYYY-MM.' }),
      plan: Enum(PLAN, { description: 'Your plan now.' }),
      limit: Type.Integer({ description: "The plan's monthly limit: the `limit` of a `429 quota_exceeded`." }),
      used: Type.Integer({
        description:
          'The quota counter of the month: the `used` of a `429 quota_exceeded` (refunds of cancelled, never-tried messages taken back). Whole customer, whatever the key scope.',
      }),
      remaining: Type.Integer(),
      resetsAt: Time('When the quota renews: the first instant of the next UTC month.'),
      byDay: Type.Array(
        Type.Object(
          { date: Type.String({ format: 'date', description: 'UTC day, YYYY-MM-DD.' }), ...UsageCounters },
          { additionalProperties: true },
        ),
        { description: 'Every day of the month up to today (a past month: all its days), zeros included.' },
      ),
      byAccount: Type.Array(Type.Object({ chatAccountId: Id(), ...UsageCounters }, { additionalProperties: true }), {
        description: 'The accounts with any count in the month, by id. A scoped key: its account only (byDay too).',
      }),
      pricing: Type.Optional(
        Type.Object(
          {
            ...PricingCounts,
            byCategory: Type.Array(
              Type.Object({ category: Type.String(), ...PricingCounts }, { additionalProperties: true }),
            ),
          },
          {
            additionalProperties: true,
            description:
              "Messages the provider priced in the month (on the UTC day of their first pricing receipt), as its receipts said: `billable`, `free`, or `unknown` (no `billable` flag), in all and by the receipt's `category`. Addition (issue #25).",
          },
        ),
      ),
    },
    { additionalProperties: true },
  ),
);
