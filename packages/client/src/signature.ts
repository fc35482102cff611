// The x-svc-signature of a webhook request: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, the hex being
// HMAC-SHA256 of `<t>.<raw body>` with the endpoint's `whsec_` secret. For 24 hours after a rotation
// a request carries two v1 values (new and old secret): any match is enough. The check is the
// spec's (Events, Signature): the raw bytes, |now − t| ≤ 300 s, a constant-time comparison.
import crypto from 'node:crypto';

export type VerifyOptions = {
  /** Largest accepted |now − t|, in seconds (the spec's 300). */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
};

/** Why a signature was refused. */
export type SignatureFailure = 'missing_signature' | 'malformed_signature' | 'outside_tolerance' | 'no_match';

/**
 * True when `header` (x-svc-signature) signs `rawBody` (the bytes as received, before any JSON
 * parsing) with `secret`, or with any of several secrets, within the tolerance. Constant-time.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): boolean {
  return checkSignature(rawBody, header, secret, options) === null;
}

/** null when the signature holds, else why not (verifyWebhookSignature and constructEvent). */
export function checkSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): SignatureFailure | null {
  if (!header) return 'missing_signature';
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const given = parts
    .filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? ''))
    .map(([, v]) => Buffer.from(v!, 'hex'));
  if (!Number.isInteger(t) || given.length === 0) return 'malformed_signature';
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return 'outside_tolerance';
  const secrets = typeof secret === 'string' ? [secret] : secret;
  // Every secret against every value, without stopping at the first match: the time taken does not
  // tell which one matched.
  let matched = false;
  for (const s of secrets) {
    const expected = hmac(s, t, rawBody);
    for (const v of given) if (crypto.timingSafeEqual(v, expected)) matched = true;
  }
  return matched ? null : 'no_match';
}

/**
 * The x-svc-signature the service would send for `rawBody` at `timestamp` (unix seconds, default
 * now): one v1 per secret, as during a rotation. For tests of a webhook receiver.
 */
export function signWebhookPayload(
  rawBody: string | Uint8Array,
  secret: string | readonly string[],
  timestamp = Math.floor(Date.now() / 1000),
): string {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${hmac(s, timestamp, rawBody).toString('hex')}`)].join(',');
}

function hmac(secret: string, t: number, rawBody: string | Uint8Array): Buffer {
  return crypto.createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
}
