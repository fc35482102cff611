-- Inbound: the sender aggregate (never purged; deleted with the account), receptions (dedupe of
-- provider retries), privacy-identifier mappings, the inbox (Pro), inbox filters, forwarding rules.

CREATE TABLE senders (
  chat_account_id  uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  customer_id      uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  phone_e164       text NOT NULL,
  first_inbound_at timestamptz NOT NULL,
  last_inbound_at  timestamptz NOT NULL,
  inbound_count    integer NOT NULL,
  display_name     text,
  PRIMARY KEY (chat_account_id, phone_e164)
);
CREATE INDEX senders_customer ON senders (customer_id);

-- One row per inbound message the provider sent us, stored or not: provider retries do nothing.
CREATE TABLE inbound_receptions (
  chat_account_id     uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  provider_message_id text NOT NULL,
  received_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chat_account_id, provider_message_id)
);
CREATE INDEX inbound_receptions_received ON inbound_receptions (received_at);

-- A privacy identifier (business-scoped user id) seen together with a number.
CREATE TABLE sender_identities (
  chat_account_id uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  phone_e164      text NOT NULL,
  PRIMARY KEY (chat_account_id, user_id)
);

CREATE TABLE inbound_messages (
  id                  uuid PRIMARY KEY,
  customer_id         uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  chat_account_id     uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  channel             text NOT NULL,
  provider_message_id text NOT NULL,
  from_e164           text,
  from_display_name   text NOT NULL DEFAULT '',
  message_type        text NOT NULL,
  text                text,
  display_text        text,
  reply_to_provider_message_id text,
  received_at         timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL
);
CREATE INDEX inbound_messages_customer_received ON inbound_messages (customer_id, received_at DESC, id DESC);
CREATE INDEX inbound_messages_expires ON inbound_messages (expires_at);

CREATE TABLE inbox_filters (
  chat_account_id uuid PRIMARY KEY REFERENCES chat_accounts (id) ON DELETE CASCADE,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  mode            text NOT NULL CHECK (mode IN ('off', 'whitelist', 'blacklist')),
  numbers         text[] NOT NULL DEFAULT '{}',
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE forwarding_rules (
  id              uuid PRIMARY KEY,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  chat_account_id uuid REFERENCES chat_accounts (id) ON DELETE CASCADE,
  name            text NOT NULL DEFAULT '',
  condition_type  text NOT NULL CHECK (condition_type IN ('contains', 'starts_with', 'regex')),
  pattern         text NOT NULL,
  case_sensitive  boolean NOT NULL DEFAULT false,
  url             text NOT NULL,
  is_active       boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forwarding_rules_customer ON forwarding_rules (customer_id);
