-- Scheduled sends (POST /messages and POST /messages/broadcast with sendAt): the time the caller
-- asked for, kept after the send. The message row stays the job: its due_at is set to this time
-- at insert, so the dispatcher's due-time index (messages_due) is what makes it wait.
ALTER TABLE messages ADD COLUMN scheduled_at timestamptz;
-- GET /messages?scheduled=true: what still waits for its time, newest first, per customer.
CREATE INDEX messages_scheduled ON messages (customer_id, created_at DESC, id DESC)
  WHERE scheduled_at IS NOT NULL AND status = 'pending';
