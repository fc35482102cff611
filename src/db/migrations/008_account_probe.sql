-- Re-verifying accounts marked after a rejected token (src/accounts/account-prober.ts).
-- probe_next_at: when the next probe is due; NULL when the account is not being probed. While a
-- worker probes it, it holds the claim's lease (a crashed worker's probe is retried after it).
-- probe_attempts: probes in a row that did not get the token accepted since the account was marked.
ALTER TABLE chat_accounts ADD COLUMN probe_next_at timestamptz;
ALTER TABLE chat_accounts ADD COLUMN probe_attempts integer NOT NULL DEFAULT 0;
CREATE INDEX chat_accounts_probe_due ON chat_accounts (probe_next_at) WHERE probe_next_at IS NOT NULL;
