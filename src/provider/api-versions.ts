// The provider's Graph API versions: when each was released and until when the provider serves it.
// The one place these dates live (the config check, the start-up warning, /readyz, the operator
// API and the emulator all read it). Source and assumptions: docs/provider-protocol-2026.md,
// "API versions". When the provider publishes a new version or an expiry, add it here (and there).

/** The version the service calls unless PROVIDER_API_VERSION says otherwise (served until 2027-10-08). */
export const DEFAULT_API_VERSION = 'v23.0';

/** A start-up warning when the configured version expires within this many days. */
export const EXPIRY_WARNING_DAYS = 90;

type VersionDates = {
  /** Release date (UTC, YYYY-MM-DD). */
  released: string;
  /** The provider's published "available until" date; null while it says "TBD". */
  expires: string | null;
};

/** Graph API versions, newest first (the provider's changelog, read 2026-11-26). */
export const API_VERSIONS: Readonly<Record<string, VersionDates>> = {
  'v26.0': { released: '2026-07-29', expires: null },
  'v25.0': { released: '2026-02-18', expires: '2028-07-29' },
  'v24.0': { released: '2025-10-08', expires: '2028-02-18' },
  'v23.0': { released: '2025-05-29', expires: '2027-10-08' },
  'v22.0': { released: '2025-01-21', expires: '2027-05-20' },
  'v21.0': { released: '2024-10-02', expires: '2027-01-21' },
  'v20.0': { released: '2024-05-21', expires: '2026-09-24' },
  'v19.0': { released: '2024-01-23', expires: '2026-05-21' },
  'v18.0': { released: '2023-09-12', expires: '2026-01-26' },
  'v17.0': { released: '2023-05-23', expires: '2025-09-12' },
};

export type ApiVersionStatus =
  | { state: 'unknown'; version: string }
  | {
      state: 'current' | 'expiring' | 'expired';
      version: string;
      released: string;
      /** null: the provider has not published one yet. */
      expires: string | null;
      /** Whole days until `expires` (negative once past); null without an expiry. */
      daysLeft: number | null;
    };

const DAY_MS = 86_400_000;

/**
 * Where `version` stands on `now`: unknown (not a version the provider has released, as far as this
 * table knows), expired (on or after its expiry date, UTC), expiring (within EXPIRY_WARNING_DAYS),
 * or current.
 */
export function apiVersionStatus(version: string, now: Date = new Date()): ApiVersionStatus {
  const dates = Object.hasOwn(API_VERSIONS, version) ? API_VERSIONS[version] : undefined;
  if (!dates) return { state: 'unknown', version };
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysLeft = dates.expires === null ? null : Math.round((Date.parse(dates.expires) - today) / DAY_MS);
  const state =
    daysLeft === null
      ? 'current'
      : daysLeft <= 0
        ? 'expired'
        : daysLeft <= EXPIRY_WARNING_DAYS
          ? 'expiring'
          : 'current';
  return { state, version, released: dates.released, expires: dates.expires, daysLeft };
}

/** What an operator sees (/readyz, GET /admin/provider): the version the service calls and its dates. */
export function apiVersionSummary(version: string, now: Date = new Date()) {
  const s = apiVersionStatus(version, now);
  return s.state === 'unknown'
    ? { apiVersion: version, state: s.state, released: null, expires: null, daysLeft: null }
    : { apiVersion: version, state: s.state, released: s.released, expires: s.expires, daysLeft: s.daysLeft };
}

/**
 * Why `name` (the setting) cannot be `version`, or null when it can: a version the table does not
 * know is a typo or a release too old for it. An expired one can (start-up says so loudly, see
 * apiVersionWarning): the provider serves calls to an expired version with its oldest one, and a
 * service must never refuse to restart because a date passed.
 */
export function apiVersionProblem(name: string, version: string, now: Date = new Date()): string | null {
  const s = apiVersionStatus(version, now);
  if (s.state === 'unknown')
    return `${name}=${version} is not a Graph API version this release knows (${Object.keys(API_VERSIONS).join(', ')}); use ${DEFAULT_API_VERSION} or newer`;
  return null;
}

/**
 * The start-up warning when `version` expires within EXPIRY_WARNING_DAYS of `now`, or has expired;
 * null otherwise.
 */
export function apiVersionWarning(name: string, version: string, now: Date = new Date()): string | null {
  const s = apiVersionStatus(version, now);
  if (s.state === 'expired')
    return `${name}=${version} expired on ${s.expires}: the provider serves its calls with its oldest version, or refuses them; move to ${DEFAULT_API_VERSION} or newer (docs/provider-protocol-2026.md, "API versions")`;
  if (s.state !== 'expiring') return null;
  return `${name}=${version} expires on ${s.expires} (in ${s.daysLeft} day${s.daysLeft === 1 ? '' : 's'}): the provider stops serving it then; move to a newer version (docs/provider-protocol-2026.md, "API versions")`;
}

/** GET /admin/provider: the version this process calls, and every version the table knows, newest first. */
export function providerVersionReport(version: string, now: Date = new Date()) {
  return {
    ...apiVersionSummary(version, now),
    versions: Object.keys(API_VERSIONS).map((v) => {
      const { apiVersion, ...rest } = apiVersionSummary(v, now);
      return { version: apiVersion, ...rest };
    }),
  };
}
