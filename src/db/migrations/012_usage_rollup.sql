-- Usage per (customer, UTC day, chat account): what GET /usage and the portal's chart read, kept
-- up to date by the writes that change it (the accept batch, the lifecycle's transitions and
-- receipts), so a month's usage is at most 31 rows per account to read, never a scan of messages.
-- Sandbox messages are never counted. `accepted` counts on the day the quota was charged, the
-- other counters on the UTC day the message reached that status (provider time when known).
CREATE TABLE usage_daily (
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  day             date NOT NULL,
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  accepted        integer NOT NULL DEFAULT 0,
  sent            integer NOT NULL DEFAULT 0,
  delivered       integer NOT NULL DEFAULT 0,
  read            integer NOT NULL DEFAULT 0,
  failed          integer NOT NULL DEFAULT 0,
  PRIMARY KEY (customer_id, day, chat_account_id)
);

-- The quota.threshold events sent: one row per (customer, month, threshold), inserted with
-- ON CONFLICT DO NOTHING in the transaction that charges the quota, so each is sent once a month
-- however many processes accept at once and however often a refund takes usage back below it.
CREATE TABLE quota_alerts (
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  month       date NOT NULL,
  threshold   integer NOT NULL CHECK (threshold IN (80, 100)),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, month, threshold)
);
