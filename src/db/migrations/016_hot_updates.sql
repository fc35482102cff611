-- Room for HOT updates (decision 0017). An update that changes no indexed column, and no column
-- an index's predicate reads, can stay on its page without new index entries, if the page has
-- room. A message's receipts (sent -> delivered -> read) change only such columns, but
-- messages_scheduled's predicate read `status`, so every status change wrote a new entry into
-- each of the table's nine indexes. Its predicate is now `scheduled_at IS NOT NULL` alone
-- (scheduled_at is set at accept and never changes; GET /messages?scheduled=true still filters
-- `status = 'pending'`). Pages of messages and webhook_deliveries, both updated several times
-- per row, are left 15 % free for the new row versions (new pages only; existing ones fill up
-- as before). The new index has a new name, so an operator of a large installation can build it
-- beforehand with CREATE INDEX CONCURRENTLY (same definition) and this migration skips it.
CREATE INDEX IF NOT EXISTS messages_scheduled_at ON messages (customer_id, created_at DESC, id DESC) WHERE scheduled_at IS NOT NULL;
DROP INDEX messages_scheduled;
ALTER TABLE messages SET (fillfactor = 85);
ALTER TABLE webhook_deliveries SET (fillfactor = 85);
