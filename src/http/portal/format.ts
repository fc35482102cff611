// Small display helpers shared by the pages.
import { type Plan, PLAN_LIMITS, PLANS } from '../../plans/plans.js';
import { type Feature } from '../../plans/plans.js';

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function planName(plan: Plan): string {
  return plan.charAt(0).toUpperCase() + plan.slice(1);
}

/** The plans that include a feature, for the gate notices ("Basic and Pro"). */
export function plansWith(feature: Feature): string {
  const names = PLANS.filter((p) => PLAN_LIMITS[p][feature]).map(planName);
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

export function number(n: number): string {
  return n.toLocaleString('en-US');
}
