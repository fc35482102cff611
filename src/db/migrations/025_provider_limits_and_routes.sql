-- Per-recipient pacing learned from the provider's pair rate limit (131056, decision 0037): after
-- a refusal, sends from one chat account to one recipient are spaced `spacing_ms` apart (doubled
-- on each further refusal while the row lives, up to a cap) until `expires_at`, when the pair is
-- forgotten. Only pairs that met the limit have a row; the rest of the account is not slowed.
CREATE TABLE recipient_pacing (
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  recipient       text NOT NULL,
  spacing_ms      integer NOT NULL,
  next_at         timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (chat_account_id, recipient)
);
CREATE INDEX recipient_pacing_expires ON recipient_pacing (expires_at);

-- Marketing templates over the Marketing Messages API (decision 0038): a per-account setting (off
-- by default); until when the account counts as not onboarded there (learned from the provider's
-- 131055, then /messages carries its marketing templates); and which route carried each message.
ALTER TABLE chat_accounts ADD COLUMN marketing_messages_api boolean NOT NULL DEFAULT false;
ALTER TABLE chat_accounts ADD COLUMN marketing_messages_refused_until timestamptz;
ALTER TABLE messages ADD COLUMN provider_route text;
