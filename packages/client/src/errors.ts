// The one error the client throws: an error answer of the API (its `error` code, status and body),
// or a request that never got an answer (status 0). The message carries what the body says: the
// `message`, the `reason` of a refused URL, every validation problem, or the network cause.
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];

/** Every `error` code the API documents (validation_error, quota_exceeded, ...). */
export type ApiErrorCode = {
  [K in keyof Schemas]: Schemas[K] extends { error: infer E extends string } ? (string extends E ? never : E) : never;
}[keyof Schemas];

/** The codes of a ChatGateError: the API's; `network_error`, `timeout` or `aborted` (the caller's signal) when no answer came. */
export type ErrorCode = ApiErrorCode | 'network_error' | 'timeout' | 'aborted';

/** `details` of a 400 validation_error: one entry per problem. */
export type Problem = { path: string; message: string };

export class ChatGateError extends Error {
  override readonly name = 'ChatGateError';
  constructor(
    /** HTTP status; 0 when no answer arrived (network error or timeout after the retries, or aborted). */
    readonly status: number,
    /**
     * The body's `error` code; `network_error` or `timeout` when status is 0. A newer service may
     * answer a code this version does not list: compare with the codes you handle, keep a default.
     */
    readonly error: ErrorCode,
    /** The whole error body (extra fields such as `plan`, `limit`, `resetsAt`, `reason`). */
    readonly body: Record<string, unknown>,
    /** The x-request-id of the answer, to quote in a support request. */
    readonly requestId: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(describe(status, error, body, requestId), options);
  }

  /** The problems of a validation_error (empty for other errors). */
  get details(): Problem[] {
    return problems(this.body);
  }
}

function problems(body: Record<string, unknown>): Problem[] {
  return Array.isArray(body.details) ? (body.details as Problem[]) : [];
}

/** "400 validation_error: to.phoneE164: must be …; content.text: …" and the like. */
function describe(status: number, error: string, body: Record<string, unknown>, requestId: string | null): string {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const parts = [
    text(body.message),
    text(body.reason),
    problems(body)
      .map((p) => `${p.path}: ${p.message}`)
      .join('; ') || null,
    text(body.hint),
  ].filter((p): p is string => p !== null);
  const head = `${status === 0 ? '' : `${status} `}${error}`;
  return `${head}${parts.length > 0 ? `: ${parts.join('; ')}` : ''}${requestId ? ` [request ${requestId}]` : ''}`;
}

export function isChatGateError(err: unknown, code?: ErrorCode): err is ChatGateError {
  return err instanceof ChatGateError && (code === undefined || err.error === code);
}
