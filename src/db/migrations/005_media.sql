-- Uploaded media (POST /media): metadata here, bytes in media_blobs (behind the MediaStore
-- interface, so an object store can take the bytes instead). A file is "used" once a message
-- refers to it; unused files expire an hour after upload; used ones are deleted once no message
-- using them is pending or queued.
CREATE TABLE media_files (
  id           uuid PRIMARY KEY,
  customer_id  uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  filename     text NOT NULL,
  mimetype     text NOT NULL,
  size_bytes   integer NOT NULL,
  sha256       text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,        -- expiry while unused
  used_at      timestamptz,                 -- first message that referred to it
  provider_ids jsonb NOT NULL DEFAULT '{}'  -- provider media id per phone_number_id, once uploaded there
);
CREATE INDEX media_files_customer_unused ON media_files (customer_id) WHERE used_at IS NULL;
CREATE INDEX media_files_unused_expiry ON media_files (expires_at) WHERE used_at IS NULL;

CREATE TABLE media_blobs (
  media_id    uuid PRIMARY KEY REFERENCES media_files (id) ON DELETE CASCADE,
  customer_id uuid NOT NULL,
  data        bytea NOT NULL
);

-- The uploaded file a message uses, and what the worker resolved its media to at the provider
-- ({ id, filename }), so the send itself needs no fetch or upload.
ALTER TABLE messages ADD COLUMN media_id uuid;
ALTER TABLE messages ADD COLUMN provider_media jsonb;
CREATE INDEX messages_media ON messages (media_id) WHERE media_id IS NOT NULL;
