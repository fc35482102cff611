-- Outgoing events: customer webhook endpoints, one delivery row per (event, endpoint) written in
-- the event's own transaction (outbox), and one attempt row per HTTP try.

CREATE TABLE webhook_endpoints (
  id                         uuid PRIMARY KEY,
  customer_id                uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  url                        text NOT NULL,
  description                text NOT NULL DEFAULT '',
  events                     text[] NOT NULL,
  is_active                  boolean NOT NULL DEFAULT true,
  secret_enc                 text NOT NULL,
  previous_secret_enc        text,
  previous_secret_expires_at timestamptz,
  last_success_at            timestamptz,
  last_failure_at            timestamptz,
  last_failure_reason        text,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_customer ON webhook_endpoints (customer_id);

CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY,
  customer_id      uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         text NOT NULL,
  event_type       text NOT NULL,
  payload          text NOT NULL,   -- the exact body sent on every attempt (same eventId)
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count    integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  locked_by        text,
  locked_until     timestamptz,
  last_status_code integer,
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

CREATE TABLE webhook_attempts (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id   uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at  timestamptz NOT NULL,
  status_code   integer,
  duration_ms   integer NOT NULL,
  response_body text,
  error         text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
