-- Issue #27, part 2 (decision 0048): what a message's page and a delivery's page need that no
-- row kept or that no index found.

-- A send attempt that failed and was tried again: its error (the provider's answer) and when the
-- next try was due. Only retries get a row: an attempt that succeeds or fails for good is its
-- message.status event (sent / failed, with the error). Deleted with the message.
CREATE TABLE message_retries (
  message_id      uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  attempt         integer NOT NULL,
  attempted_at    timestamptz NOT NULL,
  error           jsonb,
  next_attempt_at timestamptz,
  PRIMARY KEY (message_id, attempt)
);

-- A message's status events (its attempts' outcomes and its receipts), and the deliveries of an
-- event, found without reading a customer's events or deliveries of a period.
CREATE INDEX events_message ON events ((data ->> 'messageId')) WHERE type = 'message.status';
-- (webhook_deliveries_event, the deliveries of an event, is created by migration 030.)
