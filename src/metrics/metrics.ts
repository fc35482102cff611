// The service's Prometheus instruments, in one registry per process (never prom-client's global
// one: each createMetrics() is independent, so tests and several apps in one process stay apart).
// Call sites get a narrow typed piece of this and add one line; label values are small fixed
// vocabularies or ids whose count is capped here (never message ids or phone numbers).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import { cappedLabel } from './capped-label.js';

/** Provider answers take tens of milliseconds to seconds; the client times out at 15 s by default. */
const PROVIDER_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
/** From an event to its receiver's 2xx: retries stretch it to hours (the schedule ends near 11 h). */
const WEBHOOK_LATENCY_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 1800, 3600, 4 * 3600, 12 * 3600];
/** Our own answers: most in milliseconds, a send batch's commit in tens, a slow database in seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type MetricsOptions = {
  /** Distinct endpoint or account ids kept as label values; later ones are counted as "other". */
  maxIdLabels: number;
};

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics(opts: MetricsOptions = { maxIdLabels: 1000 }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  return {
    registry,
    ...sendMetrics(registers, cappedLabel(opts.maxIdLabels)),
    ...inboundMetrics(registers),
    ...webhookMetrics(registers, cappedLabel(opts.maxIdLabels)),
    ...healthMetrics(registers),
    ...httpMetrics(registers),
  };
}

/**
 * The API's own requests (API, portal, operator API, provider webhook), labelled by the route's
 * template (`/messages/:id`, never the raw URL: ids and query strings would make a series each)
 * or "unmatched" for an answer no route gave (404), by method and status.
 */
function httpMetrics(registers: Registry[]) {
  const requests = new Counter({
    name: 'chatgate_http_requests_total',
    help: 'HTTP requests answered, by method, route template ("unmatched": no route) and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'chatgate_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });
  return {
    /** One answered request; `route` is the template the router matched, or null. */
    observeRequest(method: string, route: string | null, status: number, seconds: number) {
      const labels = { method, route: route ?? 'unmatched' };
      requests.inc({ ...labels, status: String(status) });
      duration.observe(labels, seconds);
    },
  };
}

/** The database as this process meets it (health/database-faults.ts). */
function healthMetrics(registers: Registry[]) {
  return {
    databaseFaults: new Counter({
      name: 'chatgate_database_faults_total',
      help: 'Database faults seen by this process (requests answered 503 database_unavailable, worker passes retried, readiness), by reason (deadline, connection, disk_full, read_only, too_many_connections, out_of_resources, shutdown, io_error)',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}

/** Sends: accepted, attempted at the provider, its latency and throttling, the dispatcher's pacing. */
function sendMetrics(registers: Registry[], accountLabel: (id: string) => string) {
  const throttled = new Counter({
    name: 'chatgate_provider_throttled_total',
    help: 'Sends the provider refused for throughput (130429) or pair rate (131056), by chat account id',
    labelNames: ['account_id', 'code'] as const,
    registers,
  });

  return {
    messagesAccepted: new Counter({
      name: 'chatgate_messages_accepted_total',
      help: 'Messages accepted for sending (POST /messages and broadcasts; repeats not counted), by content type and plan',
      labelNames: ['content_type', 'plan', 'sandbox'] as const,
      registers,
    }),
    sendAttempts: new Counter({
      name: 'chatgate_send_attempts_total',
      help: 'Live send attempts at the provider by outcome (sent, transient, permanent), error code ("" when sent) and content type (text, image, interactive, reaction …)',
      labelNames: ['outcome', 'code', 'content_type'] as const,
      registers,
    }),
    providerRequestDuration: new Histogram({
      name: 'chatgate_provider_request_duration_seconds',
      help: 'Provider API request latency by operation (send, media_upload, template, phone_lookup, media_download, mark_read)',
      labelNames: ['operation'] as const,
      buckets: PROVIDER_BUCKETS,
      registers,
    }),
    /** A throttling refusal; the account id label is capped (see MetricsOptions). */
    countThrottled(accountId: string | undefined, code: number) {
      throttled.inc({ account_id: accountLabel(accountId ?? 'unknown'), code: String(code) });
    },
    lateSends: new Counter({
      name: 'chatgate_dispatch_late_sends_total',
      help: 'Booked sends whose timer fired too late to go at their slot, by what became of them (rebooked under their claim, returned to the queue)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    pairHeldSends: new Counter({
      name: 'chatgate_dispatch_pair_paced_total',
      help: "Sends held back (no provider call, no account slot) until their recipient's turn under the pacing learned from the provider's pair rate limit (131056)",
      registers,
    }),
    paceLowered: new Counter({
      name: 'chatgate_dispatch_pace_lowered_total',
      help: "Times a chat account's send pace was lowered (halved, at most once a second) after the provider refused its number's throughput (130429); the refusals themselves are in chatgate_provider_throttled_total",
      registers,
    }),
    portfolioLimit: new Counter({
      name: 'chatgate_portfolio_limit_total',
      help: "The business portfolios' messaging limit (decision 0044): alerts (a portfolio's use crossed 80 or 100 %, threshold label) and refused sends (PORTFOLIO_LIMIT_REACHED, no provider call)",
      labelNames: ['outcome', 'threshold'] as const,
      registers,
    }),
  };
}

/** What the provider's webhook brings: status receipts and inbound messages (and their handling). */
function inboundMetrics(registers: Registry[]) {
  return {
    receipts: new Counter({
      name: 'chatgate_receipts_total',
      help: "Items of the provider's webhooks by result. applied: a status receipt that moved its message (sent, delivered, read, failed). ignored: a status receipt with nothing left to move, and normal: the `sent` receipt of a send whose own answer already marked it sent, a receipt the provider repeated, or one that arrives after a later status (delivered after read); on a healthy live run it is of the same order as applied, not a fault. parked: a receipt for a message not known yet, applied when it is. unknownAccount: an item for a phone number no chat account has. skipped: an item that could not be parsed. failed: an item whose recording failed (the provider redelivers the webhook)",
      labelNames: ['result'] as const,
      registers,
    }),
    inboundMessages: new Counter({
      name: 'chatgate_inbound_messages_total',
      help: 'Inbound messages from the provider webhook by result (ingested, duplicate, failed)',
      labelNames: ['result'] as const,
      registers,
    }),
    inboundByKind: new Counter({
      name: 'chatgate_inbound_messages_by_kind_total',
      help: 'Inbound messages ingested, by kind (messageType; unknown kinds count as "other")',
      labelNames: ['kind'] as const,
      registers,
    }),
    inboundUnsupported: new Counter({
      name: 'chatgate_inbound_unsupported_total',
      help: 'Inbound provider items kept as kind unsupported, by reason (provider: the provider could not carry it; no_sender, no_id, bad_timestamp, not_an_object: we could not read it; no_phone_number_id: not kept, no account) and raw type',
      labelNames: ['reason', 'type'] as const,
      registers,
    }),
    inboundForwarding: new Counter({
      name: 'chatgate_inbound_forwarding_total',
      help: 'Inbound messages whose forwarding by rules is finished, by result (forwarded, unmatched, failed)',
      labelNames: ['result'] as const,
      registers,
    }),
    inboundMediaFiles: new Counter({
      name: 'chatgate_inbound_media_files_total',
      help: 'Inbound file fetch attempts by result (fetched, retry, failed, skipped_too_large, skipped_type)',
      labelNames: ['result'] as const,
      registers,
    }),
    markRead: new Counter({
      name: 'chatgate_inbound_read_marks_total',
      help: 'POST /inbound-messages/{id}/read by result (sent, already, simulated, failed)',
      labelNames: ['result'] as const,
      registers,
    }),
  };
}

/** Our webhook deliveries to customers' endpoints. */
function webhookMetrics(registers: Registry[], endpointLabel: (id: string) => string) {
  const endpointAttempts = new Counter({
    name: 'chatgate_webhook_endpoint_attempts_total',
    help: 'Webhook delivery attempts by endpoint id and outcome (success, failure)',
    labelNames: ['endpoint_id', 'outcome'] as const,
    registers,
  });

  return {
    webhookDeliveries: new Counter({
      name: 'chatgate_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (success, failure) and HTTP class (2xx … 5xx, or none)',
      labelNames: ['outcome', 'http_class'] as const,
      registers,
    }),
    webhookDeliveryLatency: new Histogram({
      name: 'chatgate_webhook_delivery_latency_seconds',
      help: 'Time from an event to the 2xx of its delivery (retries included)',
      buckets: WEBHOOK_LATENCY_BUCKETS,
      registers,
    }),
    /** One attempt of one endpoint; the endpoint id label is capped (see MetricsOptions). */
    countEndpointAttempt(endpointId: string, outcome: 'success' | 'failure') {
      endpointAttempts.inc({ endpoint_id: endpointLabel(endpointId), outcome });
    },
  };
}

/** Gauges whose value is read when Prometheus scrapes (collect), not pushed by call sites. */
export function scrapedGauge<L extends string>(
  metrics: Pick<Metrics, 'registry'>,
  def: { name: string; help: string; labelNames: readonly L[] },
  collect: (gauge: Gauge<L>) => Promise<void> | void,
): Gauge<L> {
  return new Gauge<L>({
    ...def,
    registers: [metrics.registry],
    async collect() {
      await collect(this);
    },
  });
}
