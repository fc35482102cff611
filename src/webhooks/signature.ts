// x-svc-signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one v1 per
// signing secret (two during the 24 h after a rotation). `verifyWebhookSignature` is what a
// customer copies to check it: raw body, 300 s tolerance, constant-time comparison.
import crypto from 'node:crypto';

/** Every header of a delivery's POST (the deliverer's, and the portal's view of an attempt). */
export function requestHeaders(d: { eventType: string; eventId: string }, signature: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'ChatGate-Webhooks/1.0',
    'x-svc-event': d.eventType,
    'x-svc-event-id': d.eventId,
    'x-svc-signature': signature,
  };
}

export function signatureHeader(
  rawBody: string,
  secrets: string[],
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const v1 = secrets.map(
    (s) => `v1=${crypto.createHmac('sha256', s).update(`${nowSeconds}.${rawBody}`).digest('hex')}`,
  );
  return [`t=${nowSeconds}`, ...v1].join(',');
}

/**
 * True when `header` carries a valid signature of `rawBody` (the exact bytes received, before any
 * JSON parsing) by `secret`, made within `toleranceSeconds` of now.
 */
export function verifyWebhookSignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  opts: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t)) return false;
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? 300)) return false;
  const expected = crypto.createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  return parts
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .some(([, v]) => crypto.timingSafeEqual(Buffer.from(v!, 'hex'), expected));
}
