// Checks the x-svc-signature of a webhook request: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, the
// hex being HMAC-SHA256 of `<t>.<raw body>` with the endpoint's `whsec_` secret. For 24 hours after
// a rotation a request carries two v1 values (new and old secret): any match is enough.
import crypto from 'node:crypto';

export type VerifyOptions = {
  /** Largest accepted |now − t|, in seconds (the spec's 300). */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
};

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
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const now = (options.now ?? Date.now()) / 1000;
  if (!Number.isInteger(t) || Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return false;
  const given = parts
    .filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? ''))
    .map(([, v]) => Buffer.from(v!, 'hex'));
  const secrets = typeof secret === 'string' ? [secret] : secret;
  return secrets.some((s) => {
    const expected = crypto.createHmac('sha256', s).update(`${t}.`).update(rawBody).digest();
    return given.some((v) => crypto.timingSafeEqual(v, expected));
  });
}
