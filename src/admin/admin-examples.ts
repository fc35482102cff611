// Examples of every `chatgate admin` command, printed by its --help (after the usage line).
export const ADMIN_EXAMPLES: Record<string, string[]> = {
  'customers create': ['chatgate admin customers create --name "Acme" --plan basic --default-country GB --quiet'],
  'customers list': [
    'chatgate admin customers list --search acme',
    'chatgate admin customers list --plan pro --all --json',
  ],
  'customers get': ['chatgate admin customers get 3f0c…'],
  'customers update': ['chatgate admin customers update 3f0c… --plan pro'],
  'accounts create': [
    'chatgate admin accounts create 3f0c… --type OFFICIAL --phone +15550100200 --display-name Support \\\n      --phone-number-id 1234567890 --waba-id 987654321 --access-token EAAG… --quiet',
    'chatgate admin accounts create 3f0c… --type DIRECT --phone +15550100201 --display-name Desk',
  ],
  'accounts update': [
    'chatgate admin accounts update 7a1d… --access-token EAAG…',
    'chatgate admin accounts update 7a1d… --send-policy TEST --test-recipient +15551230000',
  ],
  'accounts list': ['chatgate admin accounts list 3f0c… --json'],
  usage: ['chatgate admin usage 3f0c…', 'chatgate admin usage 3f0c… --month 2026-10 --json'],
  'keys create': [
    'chatgate admin keys create 3f0c… --sandbox --quiet',
    'chatgate admin keys create 3f0c… --account 7a1d… --template-access read --name "billing"',
  ],
  'keys list': ['chatgate admin keys list 3f0c…'],
  'keys revoke': ['chatgate admin keys revoke 5b2e…'],
  'users create': ['chatgate admin users create 3f0c… --email owner@acme.example --role owner'],
  'users list': ['chatgate admin users list 3f0c…'],
  'users reset-password': ['chatgate admin users reset-password 9c4f…'],
  'users disable': ['chatgate admin users disable 9c4f…'],
  rekey: ['ENCRYPTION_KEY=<new> ENCRYPTION_KEY_PREVIOUS=<old> chatgate admin rekey'],
};
