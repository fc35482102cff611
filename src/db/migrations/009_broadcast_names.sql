-- Broadcasts get an optional name (1–200 characters, given at creation), and are listed newest
-- first per customer (GET /broadcasts), paged by (created_at, id) like messages.
ALTER TABLE broadcasts ADD COLUMN name text;
CREATE INDEX broadcasts_customer_created ON broadcasts (customer_id, created_at DESC, id DESC);
