-- What a broadcast sends and when, kept on its record (decision 0049): the shared content (the
-- intake's content JSON, before any recipient's own components) for the portal's broadcast page,
-- and sendAt (null: sent at once). Broadcasts created before this have neither (NULL).
ALTER TABLE broadcasts ADD COLUMN IF NOT EXISTS content jsonb;
ALTER TABLE broadcasts ADD COLUMN IF NOT EXISTS send_at timestamptz;
