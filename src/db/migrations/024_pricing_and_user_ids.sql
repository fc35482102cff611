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

-- Sends addressed by a business-scoped user id (decision 0036): the id the send named (null for
-- a send to a number). `recipient` is the recipient key: the number when it was known at accept,
-- else the id itself. The index finds a user's unsent messages when the id changes; its predicate
-- reads only this column, set at accept, so status updates stay HOT (decision 0017).
ALTER TABLE messages ADD COLUMN recipient_user_id text;
CREATE INDEX messages_recipient_user_id ON messages (chat_account_id, recipient_user_id) WHERE recipient_user_id IS NOT NULL;
