-- The portal's conversation view (decision 0039): one number's messages of an account, newest
-- first, a page at a time. Without these a page scans every message of the customer.
-- Neither column changes after insert, so status updates stay heap-only (HOT) updates.
CREATE INDEX IF NOT EXISTS messages_customer_recipient_created
  ON messages (customer_id, recipient, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS inbound_messages_customer_from_received
  ON inbound_messages (customer_id, from_e164, received_at DESC, id DESC);
