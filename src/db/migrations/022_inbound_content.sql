-- Inbound content by kind (decision 0033): what a button or list reply chose, a reaction's emoji
-- and target, a location, contact cards, a medium's provider description. Kept as the parsed,
-- bounded JSON the API shows; null on rows stored before (read as "no content").
ALTER TABLE inbound_messages ADD COLUMN content jsonb;

-- A user's current reaction to one of our messages, on every plan (it describes our message, like
-- a receipt): one per (message, reacting user), the newest wins, a removal keeps the row with a
-- null emoji so an older reaction delivered late cannot bring it back. Deleted with the message.
CREATE TABLE message_reactions (
  message_id         uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
  reactor            text NOT NULL,
  customer_id        uuid NOT NULL,
  from_e164          text,
  from_user_id       text,
  emoji              text,
  reacted_at         timestamptz NOT NULL,
  inbound_message_id uuid,
  PRIMARY KEY (message_id, reactor)
);
