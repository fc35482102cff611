-- The audit log pages by (at, entry_id) with a cursor that carries milliseconds (shared/cursor.ts):
-- an entry at .123200 after a page ending at .123456 fell between pages. Times are kept to the
-- millisecond, as webhook deliveries' created_at is (decision 0050).
ALTER TABLE portal_audit_log ALTER COLUMN at SET DEFAULT date_trunc('milliseconds', now());
UPDATE portal_audit_log SET at = date_trunc('milliseconds', at) WHERE at <> date_trunc('milliseconds', at);
