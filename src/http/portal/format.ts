// Small display helpers shared by the pages.
import { effectiveTtlSeconds, type Plan, PLAN_LIMITS, PLANS } from '../../plans/plans.js';
import { type Feature } from '../../plans/plans.js';
import { errors } from '../../shared/errors.js';

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** How many days a message is kept when its send names no lifetime (the default TTL within the plan's retention). */
export function defaultKeptDays(plan: Plan): number {
  return Math.round(effectiveTtlSeconds(plan, undefined) / 86400);
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

/** ISO 8601 date-times as the pages take them: a datetime-local field's value (read as UTC) or a full timestamp. */
const ISO_WHEN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A date filter of a page's query (`since`, `until`, …): undefined when empty; a validation error
 * (shown on the page as the API shows it) for anything that is not a real ISO 8601 date-time.
 */
export function parseWhen(value: string | undefined, path: string): Date | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim();
  const m = ISO_WHEN.exec(v);
  const problem = () =>
    errors.validation([
      { path, message: 'must be an ISO 8601 date-time, such as 2026-11-26T06:00 (UTC) or 2026-11-26T06:00:00+01:00' },
    ]);
  if (!m) throw problem();
  const [, year, month, day, hour = '00', minute = '00', second = '00', zone] = m;
  const d = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${zone ? normalZone(zone) : 'Z'}`);
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (
    Number.isNaN(d.getTime()) ||
    calendar.getUTCDate() !== Number(day) ||
    calendar.getUTCMonth() !== Number(month) - 1 ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59
  )
    throw problem();
  const fraction = /\.(\d{1,9})/.exec(v.slice(10));
  return fraction ? new Date(d.getTime() + Math.floor(Number(`0.${fraction[1]}`) * 1000)) : d;
}

function normalZone(zone: string): string {
  if (zone.toUpperCase() === 'Z') return 'Z';
  return zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
}
