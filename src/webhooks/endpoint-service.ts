// Webhook endpoints of a customer: management, secrets (sealed; shown once), the test event,
// delivery history and redelivery. Every method takes the caller and applies who may manage
// endpoints (plans Basic and Pro; not a key scoped to one account). A sandbox key manages only
// sandbox endpoints, which get only sandbox events; live callers manage only live endpoints
// (decision 0024-sandbox-keys). Every query starts from the customer id and that partition.
import crypto from 'node:crypto';

import { type Caller, readScope, requirePlan, requireUnscoped } from '../auth/caller.js';
import { lockCustomer } from '../customers/customer-service.js';
import { type Db, notifyAfterCommit } from '../db/db.js';
import { DELIVERIES_READY } from '../events/outbox.js';
import {
  COLUMNS,
  deleteEndpoint,
  type EndpointRow,
  insertEndpoint,
  rotateEndpointSecret,
  updateEndpointRow,
} from '../lifecycle/endpoint-rows.js';
import { requeueDelivery, requeueFailed } from '../lifecycle/requeue-deliveries.js';
import { writeEvents } from '../lifecycle/write-events.js';
import { checkDestinationUrl } from '../outbound/destination-check.js';
import type { Resolve } from '../outbound/outbound-client.js';
import type { Sealer } from '../shared/crypto.js';
import { errors } from '../shared/errors.js';
import { keysetPage } from '../shared/keyset.js';
import { type Scope, scopeWhere } from '../shared/scope.js';
import { DEFAULT_EVENT_TYPES } from '../shared/vocab.js';
import { countFailed, deliveryPayload } from './delivery-store.js';

export const MAX_ACTIVE_ENDPOINTS = 5;
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_HOURS = 24;

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : null);

function toEndpoint(r: EndpointRow) {
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    events: r.events,
    isActive: r.is_active,
    lastSuccessAt: iso(r.last_success_at),
    lastFailureAt: iso(r.last_failure_at),
    lastFailureReason: r.last_failure_reason,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
  };
}

export const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64url')}`;

export type EndpointService = ReturnType<typeof createEndpointService>;

type Deps = { db: Db; sealer: Sealer; allowPrivateUrls: boolean; resolve: Resolve };

/** The endpoints a caller manages: the customer's (never a scoped key's), live or sandbox as the caller's key is. */
type Owner = Scope;

/** Who may manage endpoints: a key not scoped to one account (403 key_scope_insufficient), on a plan with webhooks. */
function checkAllowed(caller: Caller): void {
  requireUnscoped(caller);
  requirePlan(caller, 'webhooks');
}

function ownerOf(caller: Caller): Owner {
  checkAllowed(caller);
  return readScope(caller);
}

export function createEndpointService(deps: Deps) {
  const { db } = deps;
  return {
    checkAllowed,

    /** Whether the caller may manage endpoints (for a page that shows them only then). */
    allowed(caller: Caller): boolean {
      try {
        checkAllowed(caller);
        return true;
      } catch {
        return false;
      }
    },

    create: (caller: Caller, input: { url: string; events?: string[]; description?: string }) =>
      createEndpoint(deps, ownerOf(caller), input),

    async list(caller: Caller) {
      const owner = ownerOf(caller);
      const params: unknown[] = [];
      const where = scopeWhere(owner, 'webhook_endpoints', params);
      const rows = await db.query<EndpointRow>(
        `SELECT ${COLUMNS} FROM webhook_endpoints WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
        params,
      );
      return rows.map(toEndpoint);
    },

    get: async (caller: Caller, id: string) => toEndpoint(await getRow(db, ownerOf(caller), id)),

    update: (caller: Caller, id: string, patch: EndpointPatch) => updateEndpoint(deps, ownerOf(caller), id, patch),

    /** Deletes the endpoint with its delivery history (cascade). */
    async remove(caller: Caller, id: string): Promise<void> {
      const owner = ownerOf(caller);
      if (!(await deleteEndpoint(db, owner.customerId, owner.sandboxOnly === true, id)))
        throw errors.webhookEndpointNotFound();
    },

    /** A new secret, shown once; the previous one keeps signing for 24 hours (the oldest, if rotated twice). */
    rotateSecret: (caller: Caller, id: string) => rotateSecret(deps, ownerOf(caller), id),

    /** Queues a webhook.test event to this endpoint alone (active or not). */
    sendTest: (caller: Caller, id: string) => sendTest(db, ownerOf(caller), id),

    /** Delivery history, newest first, each with its attempts. */
    deliveries: (caller: Caller, id: string, page: DeliveryPage) => listDeliveries(db, ownerOf(caller), id, page),

    /** One delivery with its attempts and the body it sends. */
    delivery: (caller: Caller, id: string, deliveryId: string) => getDelivery(db, ownerOf(caller), id, deliveryId),

    /** How many failed deliveries of the endpoint a replay of [since, until) would queue (up to MAX_REPLAY + 1). */
    async failedCount(caller: Caller, id: string, since: Date, until: Date) {
      const owner = ownerOf(caller);
      await getRow(db, owner, id);
      return countFailed(db, owner.customerId, id, since, until);
    },

    /** Queues again every failed delivery of the endpoint created in [since, until), at most MAX_REPLAY. */
    redeliverFailed: (caller: Caller, id: string, since: Date, until: Date) =>
      redeliverFailed(db, ownerOf(caller), id, since, until),

    /** Sends a delivery again now, with the same eventId and body, and a fresh attempt budget. */
    redeliver: (caller: Caller, id: string, deliveryId: string) => redeliver(db, ownerOf(caller), id, deliveryId),
  };
}

type EndpointPatch = { url?: string; events?: string[]; description?: string; isActive?: boolean };

async function checkUrl(deps: Deps, url: string): Promise<void> {
  const reason = await checkDestinationUrl(url, { allowPrivate: deps.allowPrivateUrls, resolve: deps.resolve });
  if (!reason) return;
  // A refusal that only the local-development switch lifts says so (a receiver on this machine).
  const local =
    !deps.allowPrivateUrls && (/private or loopback/.test(reason) || (/https/.test(reason) && /^http:/i.test(url)));
  throw errors.invalidWebhookUrl(
    local
      ? `${reason} (for a receiver on this machine during local development, start the service with UNSAFE_ALLOW_PRIVATE_URLS=true)`
      : reason,
  );
}

/** Active endpoints of the owner's partition (live and sandbox endpoints have 5 each). */
async function lockedCount(tx: Pick<Db, 'query'>, owner: Owner, exceptId: string | null): Promise<number> {
  await lockCustomer(tx, owner.customerId);
  const params: unknown[] = [];
  const where = scopeWhere(owner, 'webhook_endpoints', params);
  params.push(exceptId);
  const [row] = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints
      WHERE ${where.join(' AND ')} AND is_active AND id IS DISTINCT FROM $${params.length}::uuid`,
    params,
  );
  return row?.n ?? 0;
}

async function getRow(db: Db, owner: Owner, id: string): Promise<EndpointRow> {
  const params: unknown[] = [];
  const where = scopeWhere(owner, 'webhook_endpoints', params);
  params.push(id);
  const rows = await db.query<EndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE ${where.join(' AND ')} AND id = $${params.length}`,
    params,
  );
  if (!rows[0]) throw errors.webhookEndpointNotFound();
  return rows[0];
}

async function createEndpoint(
  deps: Deps,
  owner: Owner,
  input: { url: string; events?: string[]; description?: string },
) {
  const { db, sealer } = deps;
  await checkUrl(deps, input.url);
  const secret = newSecret();
  const id = crypto.randomUUID();
  const row = await db.transaction(async (tx) => {
    if ((await lockedCount(tx, owner, null)) >= MAX_ACTIVE_ENDPOINTS)
      throw errors.limitReached('active webhook endpoints', MAX_ACTIVE_ENDPOINTS);
    return insertEndpoint(tx, [
      id,
      owner.customerId,
      input.url,
      input.description ?? '',
      [...new Set(input.events ?? DEFAULT_EVENT_TYPES)],
      sealer.seal(secret, { table: 'webhook_endpoints', column: 'secret_enc', id }),
      owner.sandboxOnly === true,
    ]);
  });
  return { ...toEndpoint(row), secret };
}

async function updateEndpoint(deps: Deps, owner: Owner, id: string, patch: EndpointPatch) {
  const { db } = deps;
  await getRow(db, owner, id);
  if (patch.url !== undefined) await checkUrl(deps, patch.url);
  const row = await db.transaction(async (tx) => {
    if (patch.isActive === true && (await lockedCount(tx, owner, id)) >= MAX_ACTIVE_ENDPOINTS) {
      throw errors.limitReached('active webhook endpoints', MAX_ACTIVE_ENDPOINTS);
    }
    const updated = await updateEndpointRow(tx, [
      owner.customerId,
      id,
      patch.url ?? null,
      patch.events ? [...new Set(patch.events)] : null,
      patch.description ?? null,
      patch.isActive ?? null,
      owner.sandboxOnly === true,
    ]);
    if (!updated) throw errors.webhookEndpointNotFound();
    return updated;
  });
  return toEndpoint(row);
}

/**
 * A new secret; the one it replaces keeps signing for ROTATION_OVERLAP_HOURS. A second rotation
 * inside that overlap keeps the oldest still-valid secret (the one the receiver most likely still
 * checks) with its original expiry, and replaces only the newer one, which may never have been
 * deployed: a receiver is never cut off by rotating twice (issue #27.2).
 */
async function rotateSecret(deps: Deps, owner: Owner, id: string) {
  const { db, sealer } = deps;
  const secret = newSecret();
  const row = await rotateEndpointSecret(db, [
    owner.customerId,
    id,
    sealer.seal(secret, { table: 'webhook_endpoints', column: 'secret_enc', id }),
    ROTATION_OVERLAP_HOURS,
    owner.sandboxOnly === true,
  ]);
  if (!row) throw errors.webhookEndpointNotFound();
  return { ...toEndpoint(row), secret, previousSecretExpiresAt: iso(row.previous_secret_expires_at) };
}

async function sendTest(db: Db, owner: Owner, id: string) {
  const { customerId } = owner;
  await getRow(db, owner, id);
  const [eventId] = await db.transaction((tx) =>
    writeEvents(
      tx,
      [
        {
          customerId,
          type: 'webhook.test',
          createdAt: new Date(),
          data: { webhookEndpointId: id, message: 'This is a test event from ChatGate.' },
        },
      ],
      id,
    ),
  );
  return { eventId: eventId!, queued: true as const };
}

/** A row of the delivery history's query as the database returns it. */
type DeliveryRow = {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  created_at: Date;
  completed_at: Date | null;
  /** json_agg: parsed by the drivers, or JSON text. */
  attempts: string | { attemptedAt: string }[];
};

const DELIVERY_SELECT = `SELECT d.id, d.event_id, d.event_type, d.status, d.attempt_count, d.next_attempt_at, d.last_status_code, d.created_at, d.completed_at,
            COALESCE((SELECT json_agg(json_build_object('attemptedAt', a.attempted_at, 'statusCode', a.status_code, 'durationMs', a.duration_ms,
                                                        'responseBody', a.response_body, 'error', a.error) ORDER BY a.seq)
                        FROM webhook_attempt_history a WHERE a.delivery_id = d.id), '[]'::json) AS attempts
       FROM webhook_deliveries d`;

/** A page of an endpoint's deliveries; the portal also filters by event type and status (the API does not). */
type DeliveryPage = { limit: number; cursor?: string; eventType?: string; status?: string };

async function listDeliveries(db: Db, owner: Owner, id: string, page: DeliveryPage) {
  await getRow(db, owner, id);
  const where = ['d.customer_id = $1', 'd.endpoint_id = $2'];
  const params: unknown[] = [owner.customerId, id];
  for (const [column, value] of [
    ['d.event_type', page.eventType],
    ['d.status', page.status],
  ] as const) {
    if (value === undefined) continue;
    params.push(value);
    where.push(`${column} = $${params.length}`);
  }
  const { rows: items, nextCursor } = await keysetPage<DeliveryRow>(
    db,
    {
      select: DELIVERY_SELECT,
      where,
      params,
      key: { at: 'd.created_at', id: 'd.id' },
    },
    page,
  );
  return { deliveries: items.map(toDelivery), nextCursor };
}

/** One delivery of an endpoint with its attempts and the body it sends (the portal's delivery page). */
async function getDelivery(db: Db, owner: Owner, id: string, deliveryId: string) {
  await getRow(db, owner, id);
  const [row] = await db.query<DeliveryRow>(
    `${DELIVERY_SELECT} WHERE d.customer_id = $1 AND d.endpoint_id = $2 AND d.id = $3`,
    [owner.customerId, id, deliveryId],
  );
  if (!row) throw errors.webhookDeliveryNotFound();
  return { ...toDelivery(row), body: (await deliveryPayload(db, owner.customerId, deliveryId)) ?? '' };
}

/**
 * Replays the failed deliveries of one endpoint created in [since, until): each queued again as
 * the API's redeliver does (same eventId and body, fresh attempt budget), MAX_REPLAY at most.
 */
async function redeliverFailed(db: Db, owner: Owner, id: string, since: Date, until: Date) {
  await getRow(db, owner, id);
  return db.transaction(async (tx) => {
    const result = await requeueFailed(tx, owner.customerId, id, since, until);
    if (result.queued > 0) await notifyAfterCommit(tx, DELIVERIES_READY);
    return result;
  });
}

function toDelivery(r: DeliveryRow) {
  return {
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attemptCount: r.attempt_count,
    nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    lastStatusCode: r.last_status_code,
    createdAt: iso(r.created_at)!,
    completedAt: iso(r.completed_at),
    attempts: (
      (typeof r.attempts === 'string' ? JSON.parse(r.attempts) : r.attempts) as {
        attemptedAt: string;
        statusCode: number | null;
        durationMs: number | null;
        responseBody: string | null;
        error: string | null;
      }[]
    ).map((a) => ({
      ...a,
      attemptedAt: new Date(a.attemptedAt).toISOString(),
    })),
  };
}

async function redeliver(db: Db, owner: Owner, id: string, deliveryId: string) {
  const { customerId } = owner;
  await getRow(db, owner, id);
  const rows = await db.transaction((tx) => requeueDelivery(tx, customerId, id, deliveryId));
  if (!rows[0]) throw errors.webhookDeliveryNotFound();
  return { deliveryId: rows[0].id, eventId: rows[0].event_id, queued: true as const };
}
