-- A secret the portal shows once (a new or revealed API key, a webhook signing secret), kept
-- sealed for the one page view that follows the form's redirect (post/redirect/get): bound to the
-- session that made it, deleted when that page reads it, so a reload never shows or re-creates it.
CREATE TABLE portal_shown_once (
  id_hash      text PRIMARY KEY,
  session_hash text NOT NULL REFERENCES portal_sessions (id_hash) ON DELETE CASCADE,
  kind         text NOT NULL,
  value_enc    text NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX portal_shown_once_session ON portal_shown_once (session_hash);
