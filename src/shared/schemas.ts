// TypeBox building blocks shared by routes; the error messages for patterns live beside them.
import { Type } from '@sinclair/typebox';

export const E164_PATTERN = '^\\+[0-9]{7,15}$';
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const COUNTRY_PATTERN = '^[A-Z]{2}$';
export const TEMPLATE_NAME_PATTERN = '^[a-z0-9_]+$';
export const LANGUAGE_PATTERN = '^[a-z]{2,3}([_-][A-Za-z0-9]{2,8})*$';
/** An ISO 8601 timestamp in UTC (`Z`), to the second or finer: `2026-12-01T09:30:00Z`. */
export const UTC_TIMESTAMP_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$';
/** A business-scoped user id: ISO country code, a dot, letters and digits (`US.1349…`, `US.ENT.…`). */
export const USER_ID_PATTERN = '^[A-Z]{2}\\.[A-Za-z0-9.]{1,150}$';
/** A UTC month, YYYY-MM. */
export const MONTH_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])$';

/** Human wording for each pattern, used when a value does not match it. */
export const PATTERN_MESSAGES: Record<string, string> = {
  [E164_PATTERN]: 'must be + followed by 7 to 15 digits',
  [UUID_PATTERN]: 'must be a UUID',
  [COUNTRY_PATTERN]: 'must be an ISO 3166 alpha-2 country code such as US',
  [TEMPLATE_NAME_PATTERN]: 'must contain only lower-case letters, digits and underscores',
  [LANGUAGE_PATTERN]: 'must be a language code such as en or en_US',
  [UTC_TIMESTAMP_PATTERN]: 'must be an ISO 8601 timestamp in UTC such as 2026-12-01T09:30:00Z',
  [MONTH_PATTERN]: 'must be a month as YYYY-MM, such as 2026-06',
  [USER_ID_PATTERN]: 'must be a business-scoped user id such as US.13491208655302741918',
};

export const Uuid = (opts: Record<string, unknown> = {}) => Type.String({ pattern: UUID_PATTERN, ...opts });
export const E164 = (opts: Record<string, unknown> = {}) => Type.String({ pattern: E164_PATTERN, ...opts });
export const Timestamp = (opts: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...opts });

export const ErrorBody = Type.Object({ error: Type.String() }, { additionalProperties: true });

/** The page parameters of every newest-first list with an opaque cursor (GET /messages, GET /broadcasts). */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 500 })),
};
