// What a failed template management call means to our caller, classified by the provider's code
// first (its advice), then by HTTP status. The provider detail is kept sanitized: code, subcode,
// messages cut short, trace id; a token is never echoed, even if the provider's text carried one.
import type { ManagementOutcome } from '../provider/cloud-api.js';
import { type AppError, templateErrors } from '../shared/errors.js';

export type TemplateOperation = 'list' | 'create';
type Failure = Extract<ManagementOutcome, { ok: false }>;

export type ProviderDetail = {
  httpStatus: number | null;
  code: number | null;
  subcode: number | null;
  message: string | null;
  userTitle: string | null;
  fbtraceId: string | null;
};

const RATE_LIMIT_CODES = new Set([4, 80007, 130429]);
const CREDENTIAL_CODES = new Set([0, 190]);
const PERMISSION_CODES = new Set([3, 10, 131005]);
const TRANSIENT_CODES = new Set([1, 2, 131000, 131016]);
export const DUPLICATE_SUBCODE = 2388024;
/** Retry-After when the provider gave none: its management limits are counted per hour. */
export const DEFAULT_RETRY_AFTER_SECONDS = 60;
const MAX_RETRY_AFTER_SECONDS = 3600;
const TOKEN_LIKE = /\bEAA[A-Za-z0-9]{16,}\b/g;

function scrub(text: string | null, secrets: string[]): string | null {
  if (text === null) return null;
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out.replace(TOKEN_LIKE, '[redacted]');
}

export function sanitizeDetail(f: Failure, secrets: string[]): ProviderDetail {
  return {
    httpStatus: f.httpStatus,
    code: f.detail?.code ?? null,
    subcode: f.detail?.subcode ?? null,
    message: scrub(f.detail?.message ?? null, secrets),
    userTitle: scrub(f.userTitle, secrets),
    fbtraceId: f.detail?.fbtraceId ?? null,
  };
}

function retryAfterSeconds(header: string | null): number {
  const n = header !== null && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) : NaN;
  return Number.isFinite(n) && n >= 1 ? Math.min(n, MAX_RETRY_AFTER_SECONDS) : DEFAULT_RETRY_AFTER_SECONDS;
}

/** The error to answer for a failed management call; `secrets` are scrubbed from provider text. */
export function toTemplateError(operation: TemplateOperation, f: Failure, secrets: string[]): AppError {
  if (f.transport !== null) {
    return templateErrors.providerUnreachable(
      f.transport === 'timeout' ? 'the provider did not answer in time' : 'could not reach the provider',
    );
  }
  const provider = sanitizeDetail(f, secrets);
  const { code, subcode } = provider;
  const status = f.httpStatus ?? 0;
  if ((code !== null && RATE_LIMIT_CODES.has(code)) || status === 429)
    return templateErrors.providerRateLimited(retryAfterSeconds(f.retryAfter), provider);
  if ((code !== null && CREDENTIAL_CODES.has(code)) || (code === null && status === 401)) {
    return templateErrors.managementUnavailable(
      'the provider rejected the management credential (invalid or expired); the operator must load a new one',
      provider,
    );
  }
  if (
    (code !== null && (PERMISSION_CODES.has(code) || (code >= 200 && code <= 299))) ||
    (code === null && status === 403)
  ) {
    return templateErrors.managementUnavailable(
      'the management credential lacks the permission to manage templates',
      provider,
    );
  }
  if (code === 100 && subcode === DUPLICATE_SUBCODE) return templateErrors.alreadyExists(provider);
  if ((code !== null && TRANSIENT_CODES.has(code)) || status >= 500)
    return templateErrors.providerUnavailable('the provider is not available; try again later', provider);
  if (operation === 'create')
    return templateErrors.rejectedByProvider(
      provider.userTitle ?? provider.message ?? `the provider refused the template (HTTP ${status})`,
      provider,
    );
  return templateErrors.managementUnavailable(
    'the provider refused to list the templates of this account (check its wabaId and management credential)',
    provider,
  );
}
