-- An account's send pace after the provider's throughput refusal (130429; decision 0055): a
-- fraction of its ceiling (throughput_mps) set at the last refusal, and that refusal's time, from
-- which the pace climbs back. In the pacing row every worker process books its slots from.
ALTER TABLE account_pacing ADD COLUMN pace float8 NOT NULL DEFAULT 1;
ALTER TABLE account_pacing ADD COLUMN throttled_at timestamptz;
