-- The login throttle counts the account-wide ceiling over distinct client addresses, and takes back
-- exactly the rows of one attempt (refused or successful): each row names its address and attempt.
ALTER TABLE portal_login_failures ADD COLUMN address text;
ALTER TABLE portal_login_failures ADD COLUMN attempt uuid;
CREATE INDEX portal_login_failures_at ON portal_login_failures (at);
