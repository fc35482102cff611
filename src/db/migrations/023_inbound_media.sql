-- Inbound files (decision 0034): one row per inbound message that carries a file (image, audio
-- and voice notes, video, sticker, document), with its fetch state. The worker claims due
-- `pending` rows (SKIP LOCKED, a lease in next_attempt_at), fetches the file from the provider with
-- the account's token, and keeps its bytes in media_blobs under this row's id. The row goes with
-- its inbound message (plan retention, account or customer deletion), and its bytes with it.
CREATE TABLE inbound_media (
  id                 uuid PRIMARY KEY,
  inbound_message_id uuid NOT NULL UNIQUE REFERENCES inbound_messages (id) ON DELETE CASCADE,
  customer_id        uuid NOT NULL,
  chat_account_id    uuid NOT NULL,
  provider_media_id  text NOT NULL,
  -- As the webhook declared them; mime_type and size_bytes are the provider's once it answered.
  mime_type          text,
  sha256             text,
  filename           text,
  size_bytes         bigint,
  state              text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'fetched', 'failed', 'skipped_too_large', 'skipped_type')),
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz,              -- due (or leased until) while pending; NULL after
  give_up_at         timestamptz NOT NULL,     -- the provider's media id expires (7 days) before this
  last_error         text,
  fetched_at         timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inbound_media_due ON inbound_media (next_attempt_at) WHERE state = 'pending';

-- The bytes of uploads and of inbound files share media_blobs (one store, behind MediaStore): its
-- key is the id of either kind of metadata row, so the foreign key to media_files gives way to a
-- trigger on each metadata table that deletes the bytes with their row (also when a customer's or
-- an account's deletion cascades to it).
ALTER TABLE media_blobs DROP CONSTRAINT media_blobs_media_id_fkey;
CREATE FUNCTION media_blobs_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM media_blobs b USING gone g WHERE b.media_id = g.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER media_files_blobs AFTER DELETE ON media_files
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION media_blobs_follow();
CREATE TRIGGER inbound_media_blobs AFTER DELETE ON inbound_media
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION media_blobs_follow();

-- POST /inbound-messages/{id}/read: when the provider was told (once per message).
ALTER TABLE inbound_messages ADD COLUMN read_at timestamptz;
ALTER TABLE inbound_messages ADD COLUMN read_typing boolean;
