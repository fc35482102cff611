-- Portal roles between owner and viewer (issue #37, decision 0073): administrator, developer and
-- support agent. Existing users keep their role: an owner keeps every right, a viewer still reads
-- only. Only the check of the column's values changes.
ALTER TABLE portal_users DROP CONSTRAINT portal_users_role_check;
ALTER TABLE portal_users ADD CONSTRAINT portal_users_role_check
  CHECK (role IN ('owner', 'admin', 'developer', 'support', 'viewer'));
