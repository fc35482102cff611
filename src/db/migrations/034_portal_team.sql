-- The customer's own team (issue #27, part 2): when a portal user last logged in (the Team
-- page), and an audit log that names its actor when it is not a portal user (the operator, an
-- API key) and pages newest first by (at, entry_id) like every other list (shared/keyset.ts).
ALTER TABLE portal_users ADD COLUMN last_login_at timestamptz;

ALTER TABLE portal_audit_log ADD COLUMN actor text;
ALTER TABLE portal_audit_log ADD COLUMN entry_id uuid NOT NULL DEFAULT gen_random_uuid();
CREATE INDEX portal_audit_log_page ON portal_audit_log (customer_id, at DESC, entry_id DESC);
DROP INDEX portal_audit_log_customer;
