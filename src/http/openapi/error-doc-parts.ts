// The parts every error body's documentation is made of (error-docs.ts, error-docs-added.ts).
export type Extra = Record<string, Record<string, unknown>>;
export type ErrorDoc = {
  status: number;
  /** components.schemas name. */
  schema: string;
  description: string;
  extra?: Extra;
  example?: Record<string, unknown>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
};

export const str = (description: string) => ({ type: 'string', description });
export const providerDetail = {
  type: 'object',
  additionalProperties: true,
  description: 'Sanitized provider detail: httpStatus, code, subcode, message, userTitle, fbtraceId (tokens redacted).',
};
