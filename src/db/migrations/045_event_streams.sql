-- Issue #36 part 4 (decision 0072). The open event streams (GET /events/stream, `chatgate listen`):
-- one row per stream while it is open, so that the limit of streams per customer holds across API
-- processes. seen_at is renewed at each heartbeat; a row not renewed for a minute is a stream whose
-- process died: it does not count, and the next stream opened for the customer deletes it.
-- The events themselves are read from `events` (the outbox), which this does not change.
CREATE TABLE event_streams (
  id          uuid PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  sandbox     boolean NOT NULL,
  opened_at   timestamptz NOT NULL DEFAULT now(),
  seen_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_streams_customer ON event_streams (customer_id);
