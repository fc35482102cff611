-- Issue #35 item 3 (decision 0076). Whether a customer may link its own numbers with the
-- provider's Embedded Signup: true or false as the operator set it for this customer; null (every
-- row before, and new customers): the plan decides (EMBEDDED_SIGNUP_PLANS).
ALTER TABLE customers ADD COLUMN embedded_signup boolean;
