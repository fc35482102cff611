// The plan table of the spec (Limits) and the feature gates derived from it.
import { errors } from '../shared/errors.js';

export const PLANS = ['free', 'starter', 'basic', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

export type PlanLimits = {
  messagesPerMonth: number;
  accounts: number;
  retentionDays: number;
  broadcasts: boolean;
  templates: boolean;
  webhooks: boolean;
  inbox: boolean;
};

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    messagesPerMonth: 500,
    accounts: 1,
    retentionDays: 3,
    broadcasts: false,
    templates: false,
    webhooks: false,
    inbox: false,
  },
  starter: {
    messagesPerMonth: 2000,
    accounts: 1,
    retentionDays: 30,
    broadcasts: false,
    templates: true,
    webhooks: false,
    inbox: false,
  },
  basic: {
    messagesPerMonth: 10000,
    accounts: 3,
    retentionDays: 30,
    broadcasts: true,
    templates: true,
    webhooks: true,
    inbox: false,
  },
  pro: {
    messagesPerMonth: 20000,
    accounts: 5,
    retentionDays: 30,
    broadcasts: true,
    templates: true,
    webhooks: true,
    inbox: true,
  },
};

/** The spec's maximum ttlSeconds: a request above it is refused (400), not clipped. */
export const MAX_TTL_SECONDS = 30 * 86400;
export const DEFAULT_TTL_SECONDS = 604800;

/** Message lifetime: the requested TTL (at most MAX_TTL_SECONDS) clipped to the plan's retention. */
export function effectiveTtlSeconds(plan: Plan, requested: number | undefined): number {
  return Math.min(requested ?? DEFAULT_TTL_SECONDS, PLAN_LIMITS[plan].retentionDays * 86400);
}

/** The UTC month a send counts against, and when the quota renews. */
export function quotaMonth(now: Date): { month: string; resetsAt: string } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return {
    month: new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10),
    resetsAt: new Date(Date.UTC(y, m + 1, 1)).toISOString(),
  };
}

export type Feature = 'broadcasts' | 'templates' | 'webhooks' | 'inbox';

/** The plan gate of a feature, as the API and the portal both apply it (403 feature_not_available). */
export function requireFeature(plan: Plan, feature: Feature): void {
  if (!PLAN_LIMITS[plan][feature]) throw errors.featureNotAvailable(plan);
}
