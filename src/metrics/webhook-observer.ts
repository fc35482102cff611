// Webhook delivery attempts turned into metrics: by outcome and HTTP class, by endpoint (capped),
// and, on a 2xx, the time since the event was created (the envelope's createdAt).
import type { PostResult } from '../outbound/outbound-client.js';
import type { Metrics } from './metrics.js';

/** The shape of webhooks/deliverer.ts's DeliveryObserver (metrics sits below webhooks/). */
type DeliveryObserver = (attempt: { endpointId: string; payload: string; post: PostResult }) => void;

export function httpClass(post: PostResult): string {
  if (post.error !== null || post.statusCode === null) return 'none';
  return `${Math.floor(post.statusCode / 100)}xx`;
}

/** The envelope's createdAt (JSON.stringify puts it before `data`, so the first match is the envelope's). */
function eventCreatedAt(payload: string): number | null {
  const match = /"createdAt":"([^"]+)"/.exec(payload);
  const at = match ? Date.parse(match[1]!) : NaN;
  return Number.isFinite(at) ? at : null;
}

export function webhookObserver(
  metrics: Pick<Metrics, 'webhookDeliveries' | 'webhookDeliveryLatency' | 'countEndpointAttempt'>,
  now: () => number = Date.now,
): DeliveryObserver {
  return ({ endpointId, payload, post }) => {
    const cls = httpClass(post);
    const outcome = cls === '2xx' ? 'success' : 'failure';
    metrics.webhookDeliveries.inc({ outcome, http_class: cls });
    metrics.countEndpointAttempt(endpointId, outcome);
    if (outcome !== 'success') return;
    const created = eventCreatedAt(payload);
    if (created !== null) metrics.webhookDeliveryLatency.observe(Math.max(0, (now() - created) / 1000));
  };
}
