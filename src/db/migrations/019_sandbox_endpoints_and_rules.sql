-- Sandbox keys never read or receive live data (decision 00XX-sandbox-keys). A webhook endpoint
-- or a forwarding rule created with a sandbox key is a sandbox one: only sandbox keys see and
-- manage it, an endpoint gets only the events of sandbox messages (and its own test event), a
-- rule never sees a live inbound message. Existing rows were created with live keys or in the
-- portal, or with a sandbox key before this rule: all of them stay live (false), as they were
-- delivered to until now. Adding a column with a constant default rewrites nothing.
ALTER TABLE webhook_endpoints ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
ALTER TABLE forwarding_rules ADD COLUMN sandbox boolean NOT NULL DEFAULT false;
