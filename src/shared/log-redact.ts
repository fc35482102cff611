// Secrets kept out of log lines by field name, one level down (a logged account's `accessToken`,
// an endpoint's `key`): what pino's `redact` paths `*.accessToken` … did. Done here, as pino's
// log formatter, because a path that starts with `*` made pino run its redactor on
// every value of every line, parsing each path again per value (about 8 µs of CPU per request
// line, measured; docs/benchmarks.md §23). Only an object that holds such a field is copied.
// Child loggers' bindings are not passed through it (pino formats them once, without the log
// formatter): they carry ids only (Fastify's reqId, the status server's name).

/** The field names whose values never reach a log line, in any object logged under a key. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['accessToken', 'appSecret', 'managementToken', 'key']);
export const CENSOR = '[redacted]';

/** `value` with its secret fields censored: a copy (same prototype, so an Error stays one) if it has any. */
function censored(value: object): object {
  let copy: Record<string, unknown> | null = null;
  for (const field in value) {
    if (!SECRET_FIELDS.has(field) || !Object.hasOwn(value, field)) continue;
    copy ??= copyOf(value);
    copy[field] = CENSOR;
  }
  return copy ?? value;
}

function copyOf(value: object): Record<string, unknown> {
  const copy = Object.create(Object.getPrototypeOf(value), Object.getOwnPropertyDescriptors(value)) as Record<
    string,
    unknown
  >;
  // V8 reads an error's stack through its own internal slot, which a copy does not have.
  if (value instanceof Error)
    Object.defineProperty(copy, 'stack', { value: value.stack, configurable: true, writable: true });
  return copy;
}

/** A log line's fields with the secrets of each object value censored (pino's `formatters.log`). */
export function redactSecrets<T extends Record<string, unknown>>(fields: T): T {
  let out: Record<string, unknown> = fields;
  for (const name in fields) {
    const value = fields[name];
    if (value === null || typeof value !== 'object') continue;
    const safe = censored(value);
    if (safe === value) continue;
    if (out === fields) out = { ...fields };
    out[name] = safe;
  }
  return out as T;
}
