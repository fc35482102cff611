-- The earlier message a message replies to (POST /messages replyTo) or reacts to (a reaction),
-- as accepted (decision 0032): {"messageId": <ours>} or {"inboundMessageId": <theirs>}, with
-- "providerMessageId" once known. A message of ours that had no provider id at acceptance gets
-- it from that message when the worker sends this one. Null for every other message.
ALTER TABLE messages ADD COLUMN reply_target jsonb;
