-- Issue #34 (decision 0078): the usage rollup's sent, delivered, read and failed counts come from
-- the events the lifecycle writes anyway, not from an upsert of usage_daily in every receipt's and
-- outcome's transaction (about three rollup row writes per message, the same count as its events).
-- A message.status event that is a counted step of a live message carries the account it counts
-- for (usage_account) and its transaction's id (usage_tx). A small loop adds the events of every
-- transaction that has ended below the watermark to usage_daily and moves the watermark past
-- them, in one transaction; GET /usage adds the rolled-up rows and the events at or above the
-- watermark in one statement, so it reads the same counts before and after a rollup. Events
-- written before this migration have no usage_tx: they were counted the old way.
ALTER TABLE events ADD COLUMN usage_account uuid, ADD COLUMN usage_tx xid8;
CREATE INDEX events_usage_tx ON events (usage_tx) WHERE usage_tx IS NOT NULL;

CREATE TABLE usage_watermark (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  -- Every transaction with a lower id has ended and its counted events are in usage_daily.
  next_tx  xid8 NOT NULL
);
INSERT INTO usage_watermark (next_tx) VALUES (pg_current_xact_id());
