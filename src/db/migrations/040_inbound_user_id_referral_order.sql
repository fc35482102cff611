-- Issue #35 items 1 and 2 (decision 0064). The ad or post a sender first came from (the provider's
-- `referral` on their first inbound message: click-to-chat ad attribution), kept on the sender
-- aggregate as the parsed, bounded JSON the API shows; null when the first message had none, and
-- on rows written before. Set when the row is created, never afterwards; when two keys of one
-- person are joined (a user id whose number became known), the earlier first contact's wins.
-- Inbound messages keep theirs (and an order's items) in their `content` (migration 022).
ALTER TABLE senders ADD COLUMN first_referral jsonb;
