// The one error the client throws: an error answer of the API (its `error` code, status and body),
// or a request that never got an answer (status 0).
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];

/** Every `error` code the API documents (validation_error, quota_exceeded, ...). */
export type ErrorCode = {
  [K in keyof Schemas]: Schemas[K] extends { error: infer E extends string } ? E : never;
}[keyof Schemas];

/** `details` of a 400 validation_error: one entry per problem. */
export type Problem = { path: string; message: string };

export class ChatGateError extends Error {
  override readonly name = 'ChatGateError';
  constructor(
    /** HTTP status; 0 when no answer arrived (network error or timeout, after the retries). */
    readonly status: number,
    /** The body's `error` code; `network_error` or `timeout` when status is 0. */
    readonly error: ErrorCode | 'network_error' | 'timeout' | (string & {}),
    /** The whole error body (extra fields such as `plan`, `limit`, `resetsAt`, `reason`). */
    readonly body: Record<string, unknown>,
    /** The x-request-id of the answer, to quote in a support request. */
    readonly requestId: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(
      `${status === 0 ? '' : `${status} `}${error}${typeof body.message === 'string' ? `: ${body.message}` : ''}`,
      options,
    );
  }

  /** The problems of a validation_error (empty for other errors). */
  get details(): Problem[] {
    return Array.isArray(this.body.details) ? (this.body.details as Problem[]) : [];
  }
}

export function isChatGateError(err: unknown, code?: ChatGateError['error']): err is ChatGateError {
  return err instanceof ChatGateError && (code === undefined || err.error === code);
}
