// The transactional outbox: events are written in the transaction of the change that causes them,
// with one delivery row per active endpoint subscribed to the event (plans with webhooks only),
// so a crash can delay an event, never lose it. The deliverer is woken by NOTIFY.
import { notifyAfterCommit, type Queryable } from '../db/db.js';
import { localDeliverer } from '../events/local-delivery.js';
import { DELIVERIES_READY, envelopeJson, newEventId, type OutboxEvent } from '../events/outbox.js';

export type { OutboxEvent };

/** The events, and their deliveries with those handed to this process's deliverer leased to it. */
const WRITE_EVENTS_SQL = `WITH t AS (
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $8::boolean[], $9::uuid[])
         AS t(id, customer_id, type, data, created_at, payload, sandbox, usage_account)),
     targets AS (
       SELECT t.id AS event_id, t.customer_id, t.type, e.id AS endpoint_id
         FROM t
         JOIN webhook_endpoints e ON e.customer_id = t.customer_id
         JOIN customers c ON c.id = t.customer_id AND c.plan IN ('basic', 'pro')
        WHERE CASE WHEN $7::uuid IS NULL THEN e.is_active AND t.type = ANY (e.events) AND (t.sandbox OR NOT e.sandbox)
                   ELSE e.id = $7::uuid END),
     inserted AS (
       -- A usage step carries its account and this transaction's id (usage-rollup.ts, decision 0078).
       INSERT INTO events (id, customer_id, type, data, payload, created_at, usage_account, usage_tx)
       SELECT t.id, t.customer_id, t.type, t.data::jsonb,
              CASE WHEN t.id IN (SELECT event_id FROM targets) THEN t.payload END, t.created_at,
              t.usage_account, CASE WHEN t.usage_account IS NOT NULL THEN pg_current_xact_id() END
         FROM t),
     held AS (
       -- The first of each endpoint's deliveries, as many as it has request slots free here.
       SELECT targets.*, $10::text IS NOT NULL AND row_number() OVER (PARTITION BY targets.endpoint_id ORDER BY targets.event_id)
                <= coalesce(s.slots, $14::int) AS held
         FROM targets LEFT JOIN unnest($12::uuid[], $13::int[]) AS s(endpoint_id, slots) ON s.endpoint_id = targets.endpoint_id)
     -- created_at to the millisecond, as page cursors carry it.
     INSERT INTO webhook_deliveries (id, customer_id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at,
                                     locked_by, locked_until, attempt_count)
     SELECT gen_random_uuid(), customer_id, endpoint_id, event_id, type, 'pending', now(), date_trunc('milliseconds', now()),
            CASE WHEN held THEN $10::text END, CASE WHEN held THEN now() + make_interval(secs => $11::int) END,
            CASE WHEN held THEN 1 ELSE 0 END
       FROM held
     RETURNING id, endpoint_id, event_id, event_type, locked_by IS NOT NULL AS held`;

/**
 * Writes events and their deliveries. `onlyEndpointId` targets one endpoint whatever it subscribes
 * to (the test event); otherwise every active subscribed endpoint of the customer gets one, a
 * sandbox endpoint only when the event is a sandbox one: live data never reaches a sandbox key's
 * endpoint.
 *
 * When this process runs a deliverer (events/local-delivery.ts, decision 0079), the deliveries its
 * endpoints have request slots free for are written leased to it with their first attempt counted
 * (as its claim would write them), and handed to it once this transaction commits.
 */
export async function writeEvents(
  tx: Queryable,
  events: OutboxEvent[],
  onlyEndpointId: string | null = null,
): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newEventId());
  // The envelope is stored once, on the event, when it has deliveries; they reference it (decision 0046).
  const local = localDeliverer(tx);
  const free = local?.freeSlots() ?? { endpointIds: [], slots: [], otherwise: 0 };
  const payloads = events.map((e, i) => envelopeJson(ids[i]!, e.type, e.createdAt, e.data));
  const deliveries = await tx.query<{
    id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    held: boolean;
  }>(WRITE_EVENTS_SQL, [
    ids,
    events.map((e) => e.customerId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
    events.map((e) => e.createdAt.toISOString()),
    payloads,
    onlyEndpointId,
    events.map((e) => e.sandbox === true),
    events.map((e) => e.usageAccountId ?? null),
    local?.holder ?? null,
    local?.leaseSeconds ?? 0,
    free.endpointIds,
    free.slots,
    free.otherwise,
  ]);
  const handed = deliveries.filter((d) => d.held);
  if (local && handed.length > 0) {
    const payloadOf = new Map(ids.map((id, i) => [id, payloads[i]!]));
    tx.afterCommit!(() =>
      local.take(
        handed.map((d) => ({
          id: d.id,
          endpointId: d.endpoint_id,
          eventId: d.event_id,
          eventType: d.event_type,
          payload: payloadOf.get(d.event_id)!,
        })),
      ),
    );
  }
  // The deliverer is woken once this commits for the others (coalesced with other commits: no NOTIFY lock here).
  if (handed.length < deliveries.length) await notifyAfterCommit(tx, DELIVERIES_READY);
  return ids;
}
