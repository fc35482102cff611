-- Suppression lists (decision 0014): per chat account, the numbers that opted out. A number is on
-- an account's list once (the first way onto it is kept); deleted with the account.
CREATE TABLE suppressions (
  id              uuid PRIMARY KEY,
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  phone_e164      text NOT NULL,
  source          text NOT NULL CHECK (source IN ('provider_error', 'user_preferences', 'keyword', 'customer')),
  reason          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chat_account_id, phone_e164)
);
CREATE INDEX suppressions_page ON suppressions (chat_account_id, created_at DESC, id DESC);

-- An account's opt-out keywords when the customer set them (no row: the default list).
CREATE TABLE opt_out_keywords (
  chat_account_id uuid PRIMARY KEY REFERENCES chat_accounts (id) ON DELETE CASCADE,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  keywords        text[] NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- POST /messages "requireReplyWindow": the dispatcher fails the send without a provider call
-- when the recipient's 24-hour reply window is closed.
ALTER TABLE messages ADD COLUMN require_reply_window boolean NOT NULL DEFAULT false;
