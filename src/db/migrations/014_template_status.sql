-- Template status from the provider (decision 0015): per chat account and provider template id,
-- the template's review status, quality score and category as the provider's webhooks last told
-- them, each with the provider's time of that change (an older update never overwrites a newer one).
CREATE TABLE template_states (
  chat_account_id      uuid NOT NULL REFERENCES chat_accounts (id) ON DELETE CASCADE,
  provider_template_id text NOT NULL,
  name                 text NOT NULL,
  language             text NOT NULL,
  status               text,
  status_at            timestamptz,
  reason               text,
  quality_score        text,
  quality_at           timestamptz,
  category             text,
  category_at          timestamptz,
  updated_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chat_account_id, provider_template_id)
);
-- The dispatcher's look-up of a template by its name and language.
CREATE INDEX template_states_name ON template_states (chat_account_id, name, language);

-- Users the provider identifies by a business-scoped user id (decision 0015): the id an inbound
-- message came from, shown as fromUserId (the number may be absent).
ALTER TABLE inbound_messages ADD COLUMN from_user_id text;
