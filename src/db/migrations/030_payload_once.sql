-- The signed envelope of an event is stored once, on the event (decision 0046), and only when the
-- event has deliveries. A delivery row references it by event_id and no longer carries its own
-- copy: every update of a delivery (claim, outcome) rewrote the whole row, envelope included.
-- Rows written before keep their payload and are read as before (coalesce). An event is purged
-- only once no delivery references it, hence the index on event_id. events_customer_created
-- served no query: events are only written, and purged by age.
ALTER TABLE events ADD COLUMN IF NOT EXISTS payload text;
ALTER TABLE webhook_deliveries ALTER COLUMN payload DROP NOT NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
DROP INDEX IF EXISTS events_customer_created;
