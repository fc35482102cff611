import { errors } from '../../shared/errors.js';

/** A query timestamp as a Date within years 1–9999 (what both JavaScript and SQL can hold). */
export function parseTimestamp(value: string | undefined, path: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  const year = d.getUTCFullYear();
  if (Number.isNaN(d.getTime()) || year < 1 || year > 9999)
    throw errors.validation([{ path, message: 'must be an ISO 8601 timestamp between years 1 and 9999' }]);
  return d;
}
