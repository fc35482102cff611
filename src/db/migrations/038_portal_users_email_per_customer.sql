-- A portal user's email is unique within their customer, not across customers (decision 0056):
-- inviting an address another customer's user has makes a separate account of this customer, so
-- the invitation answers as for any fresh address. Login and password reset look an address up
-- across customers (the index below) and tell its accounts apart by their passwords.
DROP INDEX portal_users_email;
CREATE UNIQUE INDEX portal_users_customer_email ON portal_users (customer_id, email);
CREATE INDEX portal_users_email ON portal_users (email);
