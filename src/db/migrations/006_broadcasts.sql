-- Broadcasts: one record per accepted POST /messages/broadcast; its messages are ordinary message
-- rows carrying broadcast_id (the column exists since 001). Status and progress are derived from
-- the messages; the record only keeps what they cannot tell.
CREATE TABLE broadcasts (
  id              uuid PRIMARY KEY,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  api_key_id      uuid,
  external_id     text NOT NULL,
  payload_hash    text NOT NULL,
  recipients      integer NOT NULL,
  created_at      timestamptz NOT NULL,
  -- the lifetime of its messages; the record is purged once they are gone and this has passed
  expires_at      timestamptz NOT NULL,
  cancelled_at    timestamptz
);
CREATE UNIQUE INDEX broadcasts_customer_external_id ON broadcasts (customer_id, external_id);
CREATE INDEX broadcasts_expires ON broadcasts (expires_at);

-- Progress counts and the cancel statement read a broadcast's messages by this index.
CREATE INDEX messages_broadcast ON messages (broadcast_id) WHERE broadcast_id IS NOT NULL;
