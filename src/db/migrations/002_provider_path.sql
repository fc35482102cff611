-- The live provider path: per-account send pacing shared by every worker process, and receipts
-- that arrived before the send they describe was saved.

-- Next free send slot of each account; workers reserve consecutive slots 1/throughput apart.
CREATE TABLE account_pacing (
  account_id   uuid PRIMARY KEY REFERENCES chat_accounts (id) ON DELETE CASCADE,
  next_slot_at timestamptz NOT NULL
);

-- Provider receipts whose message could not be matched yet (the provider's `sent` receipt can
-- beat our own commit of the send's answer). Applied when the send is saved; purged after 7 days.
CREATE TABLE pending_receipts (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  chat_account_id     uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  provider_message_id text NOT NULL,
  status              text NOT NULL,
  occurred_at         timestamptz NOT NULL,
  error               jsonb,
  received_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pending_receipts_wamid ON pending_receipts (provider_message_id);
CREATE INDEX pending_receipts_received ON pending_receipts (received_at);
