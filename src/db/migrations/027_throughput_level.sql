-- The number's throughput level as the provider last reported it (throughput.level: STANDARD or
-- HIGH; decision 0042). NULL: never read. When a read finds it changed, throughput_mps follows it.
ALTER TABLE chat_accounts ADD COLUMN IF NOT EXISTS throughput_level text;
