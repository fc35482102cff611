-- Customers, chat accounts, API keys, quota, messages (the message row is its own job) and the event outbox.
-- Every customer-data table carries customer_id so the schema can be sharded by customer.

CREATE TABLE customers (
  id              uuid PRIMARY KEY,
  name            text NOT NULL,
  plan            text NOT NULL CHECK (plan IN ('free', 'starter', 'basic', 'pro')),
  default_country text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE chat_accounts (
  id                   uuid PRIMARY KEY,
  customer_id          uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  type                 text NOT NULL CHECK (type IN ('OFFICIAL', 'DIRECT')),
  status               text NOT NULL CHECK (status IN ('PENDING', 'AUTHENTICATING', 'CONNECTED', 'DISCONNECTED', 'BANNED', 'ERROR')),
  phone_number         text NOT NULL,
  display_name         text NOT NULL,
  connected_at         timestamptz,
  last_error_code      text,
  -- OFFICIAL only
  phone_number_id      text,
  waba_id              text,
  access_token_enc     text,
  app_secret_enc       text,
  integration_id       text,
  management_token_enc text,
  waba_verification    text CHECK (waba_verification IN ('verified', 'unverifiable', 'unreachable')),
  verified_name        text,
  send_policy_mode     text CHECK (send_policy_mode IN ('DISABLED', 'TEST', 'PRODUCTION', 'GLOBAL')),
  test_recipients      text[] NOT NULL DEFAULT '{}',
  throughput_mps       integer NOT NULL DEFAULT 80 CHECK (throughput_mps BETWEEN 1 AND 1000),
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_accounts_customer ON chat_accounts (customer_id);
CREATE UNIQUE INDEX chat_accounts_phone_number_id ON chat_accounts (phone_number_id) WHERE phone_number_id IS NOT NULL;

CREATE TABLE api_keys (
  id              uuid PRIMARY KEY,
  customer_id     uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  chat_account_id uuid REFERENCES chat_accounts (id) ON DELETE CASCADE,
  name            text,
  sandbox         boolean NOT NULL,
  template_access text NOT NULL CHECK (template_access IN ('none', 'read', 'manage')),
  key_hash        text NOT NULL UNIQUE,  -- hex SHA-256 of the full key: the only lookup path
  key_enc         text NOT NULL,         -- encrypted copy, so the portal can reveal it later
  key_hint        text NOT NULL,         -- last 4 characters, for masked display
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);
CREATE INDEX api_keys_customer ON api_keys (customer_id);

-- Monthly quota counter per (customer, UTC month); incremented in the send transaction.
CREATE TABLE quota_usage (
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  month       date NOT NULL,
  used        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (customer_id, month)
);

CREATE TABLE messages (
  id                  uuid PRIMARY KEY,
  customer_id         uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  chat_account_id     uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  api_key_id          uuid,
  external_id         text NOT NULL,
  payload_hash        text NOT NULL,
  recipient           text NOT NULL,
  channel             text NOT NULL,
  content             jsonb NOT NULL,
  metadata            jsonb,
  sandbox             boolean NOT NULL,
  broadcast_id        uuid,
  status              text NOT NULL CHECK (status IN ('pending', 'queued', 'sent', 'delivered', 'read', 'failed')),
  attempt_count       integer NOT NULL DEFAULT 0,
  max_attempts        integer NOT NULL,
  last_error_code     text,
  error               jsonb,
  provider_message_id text,
  created_at          timestamptz NOT NULL,
  sent_at             timestamptz,
  delivered_at        timestamptz,
  read_at             timestamptz,
  failed_at           timestamptz,
  expires_at          timestamptz NOT NULL,
  last_attempt_at     timestamptz,
  -- job columns: due_at is when a worker should next act on the row (null: nothing to do);
  -- locked_until is the lease of the worker that claimed it.
  due_at              timestamptz,
  locked_by           text,
  locked_until        timestamptz
);
CREATE UNIQUE INDEX messages_customer_external_id ON messages (customer_id, external_id);
CREATE INDEX messages_customer_created ON messages (customer_id, created_at DESC, id DESC);
CREATE INDEX messages_due ON messages (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX messages_provider_message_id ON messages (provider_message_id) WHERE provider_message_id IS NOT NULL;
CREATE INDEX messages_expires ON messages (expires_at);
CREATE INDEX messages_chat_account ON messages (chat_account_id);

-- Transactional outbox: written in the same transaction as the state change that causes it.
CREATE TABLE events (
  id          text PRIMARY KEY,  -- evt_<uuid>
  customer_id uuid NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_customer_created ON events (customer_id, created_at);
CREATE INDEX events_created ON events (created_at);

-- When the purger last ran, so that of many processes only one runs it per interval.
CREATE TABLE purge_runs (
  name        text PRIMARY KEY,
  last_run_at timestamptz NOT NULL
);
