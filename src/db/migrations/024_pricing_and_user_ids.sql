-- Issue #25 items 2 and 3 (decisions 0035, 0036).

-- What each message costs, as the provider's status receipt says it (`pricing`: billable,
-- pricingModel, category, type), stored as received; null until a receipt carries one. Parked
-- receipts keep theirs until their message is known.
ALTER TABLE messages ADD COLUMN pricing jsonb;
ALTER TABLE pending_receipts ADD COLUMN pricing jsonb;

-- Priced messages per (customer, UTC day, account, category, billable), striped like usage_daily
-- (migration 015): each message counts once, on the day of the first receipt that priced it.
-- `billable` is null when the receipt did not say (the provider deprecates the flag).
CREATE TABLE usage_pricing_daily (
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  day             date NOT NULL,
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  category        text NOT NULL,
  billable        text NOT NULL CHECK (billable IN ('billable', 'free', 'unknown')),
  stripe          smallint NOT NULL,
  messages        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (customer_id, day, chat_account_id, category, billable, stripe)
);
