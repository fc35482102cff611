-- Two-factor sign-in with an authenticator app (TOTP, RFC 6238) and password reset by email
-- (decision 0051). Additive: new tables only, each row removed with its user.

-- A user's TOTP secret, sealed with ENCRYPTION_KEY (bound to portal_totp.secret_enc:<user id>,
-- covered by rekey). enabled_at is null while the enrolment waits for its first code; last_step is
-- the time step of the last code accepted: a code of that step or an earlier one is refused (replay).
CREATE TABLE portal_totp (
  user_id    uuid PRIMARY KEY REFERENCES portal_users (id) ON DELETE CASCADE,
  secret_enc text NOT NULL,
  enabled_at timestamptz,
  last_step  bigint,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Ten single-use recovery codes per user, shown once; only their SHA-256 is kept.
CREATE TABLE portal_recovery_codes (
  user_id   uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
  code_hash text NOT NULL,
  used_at   timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- The second step of a login: the password was right, the code is still owed. Short-lived,
-- single-use, only the SHA-256 of the id in the browser's cookie is kept; no session yet.
CREATE TABLE portal_login_challenges (
  id_hash    text PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL
);
CREATE INDEX portal_login_challenges_user ON portal_login_challenges (user_id);
CREATE INDEX portal_login_challenges_expires ON portal_login_challenges (expires_at);

-- Password reset links sent by email: single-use, short-lived, only the token's SHA-256 kept.
CREATE TABLE portal_password_resets (
  token_hash text PRIMARY KEY,
  user_id    uuid NOT NULL REFERENCES portal_users (id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_password_resets_user ON portal_password_resets (user_id);
CREATE INDEX portal_password_resets_expires ON portal_password_resets (expires_at);
