-- The customer portal: users of one customer, their invitations and server-side sessions, the
-- login throttle, and an audit log of sensitive portal actions (key reveals, revocations, ...).
CREATE TABLE portal_users (
  id              uuid PRIMARY KEY,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  email           text NOT NULL,            -- lower-cased
  role            text NOT NULL CHECK (role IN ('owner', 'viewer')),
  password_hash   text,                     -- scrypt; null until the invitation is accepted
  password_set_at timestamptz,
  disabled_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX portal_users_email ON portal_users (email);
CREATE INDEX portal_users_customer ON portal_users (customer_id);

-- One-time links to set a password; only the SHA-256 of the token is kept.
CREATE TABLE portal_invitations (
  token_hash text PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_invitations_user ON portal_invitations (user_id);

-- Sessions live in the database so every process shares them; the cookie carries an opaque id
-- of which only the SHA-256 is stored.
CREATE TABLE portal_sessions (
  id_hash      text PRIMARY KEY,
  user_id      uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
  customer_id  uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL        -- absolute expiry
);
CREATE INDEX portal_sessions_user ON portal_sessions (user_id);
CREATE INDEX portal_sessions_expires ON portal_sessions (expires_at);

-- Failed logins, per subject ('email:<address>' or 'ip:<address>'), counted over a window.
CREATE TABLE portal_login_failures (
  subject text NOT NULL,
  at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_login_failures_subject ON portal_login_failures (subject, at);

CREATE TABLE portal_audit_log (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  user_id     uuid,
  action      text NOT NULL,
  target      text,
  ip          text,
  at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_audit_log_customer ON portal_audit_log (customer_id, at DESC);

-- Keys created before June 2026 (imported from the previous system) have only their hash.
ALTER TABLE api_keys ALTER COLUMN key_enc DROP NOT NULL;
-- When the key last authenticated (written at most once a minute per key and process).
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
