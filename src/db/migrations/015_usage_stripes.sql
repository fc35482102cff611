-- The usage rollup's rows are striped by the writing connection (decision 0017): every accept
-- batch, send outcome and receipt batch of an account added to the same (customer, day, account)
-- row, so concurrent transactions of one account waited for each other's commit on it (the most
-- contended row of the lifecycle after the pacing rows). Each connection now adds to its own
-- stripe, (pg_backend_pid() % 8); GET /usage adds the stripes up. Existing rows are stripe 0.
ALTER TABLE usage_daily ADD COLUMN stripe smallint NOT NULL DEFAULT 0;
ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey;
ALTER TABLE usage_daily ADD PRIMARY KEY (customer_id, day, chat_account_id, stripe);
