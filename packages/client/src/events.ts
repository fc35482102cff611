// Webhook events on the receiving side: their types (one per event of the document's `webhooks`),
// constructEvent (check the signature, parse, return the typed event) and createTestWebhook (a
// signed request as the service would send it, for a receiver's own tests).
import crypto from 'node:crypto';

import type { webhooks } from './openapi-types.js';
import { checkSignature, type SignatureFailure, signWebhookPayload, type VerifyOptions } from './signature.js';

type EventBody<K extends keyof webhooks> = webhooks[K]['post'] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/**
 * The events POSTed to webhook endpoints (constructEvent checks the signature and returns one), one
 * per event of the document's `webhooks`: narrow on `type` (`ev.type === 'quota.threshold'`).
 */
export type WebhookEvent = { [K in keyof webhooks]: EventBody<K> }[keyof webhooks];
export type WebhookEventType = WebhookEvent['type'];
/** The event of one type (`EventOf<'message.status'>`). */
export type EventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;
/** Every event type, as a value (a receiver's switch, a subscription list). */
export const WEBHOOK_EVENT_TYPES = [
  'message.status',
  'message.inbound',
  'sender.first_inbound',
  'webhook.test',
  'quota.threshold',
  'template.status',
  'account.messaging_limit',
] as const satisfies readonly WebhookEventType[];
// Fails to compile when the document has an event type the list above misses.
type MissingEventTypes = Exclude<WebhookEventType, (typeof WEBHOOK_EVENT_TYPES)[number]>;
const everyEventTypeListed: [MissingEventTypes] extends [never] ? true : MissingEventTypes = true;
void everyEventTypeListed;

/** A request's headers: a fetch `Headers`, or Node's `req.headers` (names in lower case). */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Why constructEvent refused a request: the signature's failure, or a body that is not an event. */
export type WebhookVerificationFailure = SignatureFailure | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

const FAILURE_MESSAGES: Record<WebhookVerificationFailure, string> = {
  missing_signature: 'no x-svc-signature header',
  malformed_signature: 'the x-svc-signature header is not t=<unix seconds>,v1=<hex>',
  outside_tolerance: "the signature's timestamp is outside the tolerance (a replay, or a clock that is off)",
  no_match: 'no v1 signature matches the secret(s): a wrong secret, or a body changed after it was signed',
  invalid_payload: 'the body is not a ChatGate event',
};

/**
 * Checks the x-svc-signature of a webhook request against `secrets` (one, or several during a
 * rotation: any match is enough), within the tolerance (300 s), in constant time, then parses the
 * body and returns the event, typed by its `type`. Pass the raw body as received (a string, Buffer
 * or Uint8Array), not a parsed object: a re-serialised body does not match its signature. Throws
 * WebhookVerificationError (with `reason`) otherwise; answer such a request with 400 and ignore it.
 *
 * A newer service may send a type this version does not list: keep a default branch that ignores
 * it (the spec: receivers ignore unknown types and tolerate new fields in `data`).
 */
export function constructEvent(
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): WebhookEvent {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array))
    throw new TypeError('constructEvent: pass the raw body (string or bytes), not a parsed object');
  const failure = checkSignature(rawBody, header(headers, 'x-svc-signature'), secrets, options);
  if (failure !== null) throw new WebhookVerificationError(failure, FAILURE_MESSAGES[failure]);
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody));
  } catch {
    event = null;
  }
  if (!isEnvelope(event)) throw new WebhookVerificationError('invalid_payload', FAILURE_MESSAGES.invalid_payload);
  return event as WebhookEvent;
}

/** An event to sign for a test: eventId and createdAt may be left out (a fresh id, now). */
export type TestEventInput = WebhookEvent extends infer E
  ? E extends WebhookEvent
    ? { type: E['type']; data: E['data']; eventId?: string; createdAt?: string }
    : never
  : never;

/** A webhook request as the service sends it: the exact body and its headers. */
export type TestWebhook = {
  body: string;
  headers: {
    'content-type': 'application/json';
    'x-svc-event': string;
    'x-svc-event-id': string;
    'x-svc-signature': string;
  };
};

/**
 * A signed webhook request for a receiver's tests: POST `body` with `headers` to the handler, which
 * constructEvent accepts with the same secret. `timestamp` (unix seconds, default now) tests the
 * tolerance; several secrets sign it as during a rotation.
 */
export function createTestWebhook(
  event: TestEventInput,
  secret: string | readonly string[],
  options: { timestamp?: number } = {},
): TestWebhook {
  const full = {
    eventId: event.eventId ?? `evt_${crypto.randomUUID()}`,
    type: event.type,
    createdAt: event.createdAt ?? new Date().toISOString(),
    data: event.data,
  };
  const body = JSON.stringify(full);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-svc-event': full.type,
      'x-svc-event-id': full.eventId,
      'x-svc-signature': signWebhookPayload(body, secret, options.timestamp),
    },
  };
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}

function isEnvelope(v: unknown): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e.eventId === 'string' &&
    typeof e.type === 'string' &&
    typeof e.createdAt === 'string' &&
    e.data !== null &&
    typeof e.data === 'object'
  );
}
