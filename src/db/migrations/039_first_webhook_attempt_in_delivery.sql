-- A webhook delivery's first try is written into its own row, by the outcome update that ends the
-- try, instead of an insert into webhook_attempts (decision 0057, issue #26): most deliveries
-- succeed at their first try, and that insert (a row and two index entries, per event) was a
-- tenth of the rows the lifecycle wrote per message. Later tries, and every try of a delivery
-- replayed after its first, still go to webhook_attempts. Readers see both through one view, in
-- the order they happened.
ALTER TABLE webhook_deliveries
  ADD COLUMN first_attempt_at timestamptz,
  ADD COLUMN first_status_code integer,
  ADD COLUMN first_duration_ms integer,
  ADD COLUMN first_response_body text,
  ADD COLUMN first_error text;

CREATE VIEW webhook_attempt_history AS
  SELECT id AS delivery_id, 0::bigint AS seq, first_attempt_at AS attempted_at, first_status_code AS status_code,
         first_duration_ms AS duration_ms, first_response_body AS response_body, first_error AS error
    FROM webhook_deliveries WHERE first_attempt_at IS NOT NULL
  UNION ALL
  SELECT delivery_id, id AS seq, attempted_at, status_code, duration_ms, response_body, error FROM webhook_attempts;
