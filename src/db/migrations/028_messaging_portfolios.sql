-- The provider's messaging limit (decision 0044): unique recipients a business portfolio may start
-- conversations with (business-initiated sends: a template to someone whose customer-service
-- window is closed) in a moving 24 hours, shared by every number of the portfolio.
-- chat_accounts.portfolio_id: the operator's grouping of accounts that share one limit (NULL: the
-- account alone). A portfolio's key is 'p:' || portfolio_id, or 'a:' || account id when alone.
ALTER TABLE chat_accounts ADD COLUMN IF NOT EXISTS portfolio_id text;
CREATE INDEX IF NOT EXISTS chat_accounts_portfolio ON chat_accounts (portfolio_id) WHERE portfolio_id IS NOT NULL;

-- One row per portfolio that ever sent a business-initiated message or had its limit set. The row
-- is the lock that serialises admissions (every process, no over-admission): messaging_limit NULL
-- means unlimited; alert_level the last threshold (0, 80, 100 %) an event was written for.
CREATE TABLE IF NOT EXISTS messaging_portfolios (
  portfolio_key    text PRIMARY KEY,
  messaging_limit  integer DEFAULT 250,
  limit_source     text NOT NULL DEFAULT 'default',
  limit_updated_at timestamptz,
  alert_level      smallint NOT NULL DEFAULT 0,
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- The recipients each portfolio started a conversation with, and when (the last start): those with
-- started_at in the last 24 hours count. One row per (portfolio, recipient key): the same person
-- twice counts once. Rows older than a day are dead weight the purger removes.
CREATE TABLE IF NOT EXISTS portfolio_recipients (
  portfolio_key text NOT NULL,
  recipient     text NOT NULL,
  started_at    timestamptz NOT NULL,
  PRIMARY KEY (portfolio_key, recipient)
);
CREATE INDEX IF NOT EXISTS portfolio_recipients_started ON portfolio_recipients (portfolio_key, started_at);
