-- Template catalog: when a management call with the account's current management credential
-- last succeeded (capabilities.templateManagement.verifiedAt). Reset when the credential changes.
ALTER TABLE chat_accounts ADD COLUMN template_management_verified_at timestamptz;
