// `chatgate admin ...`: the operator API from a terminal. Prints the JSON answer; exits 1 on an error answer.
import { parseArgs } from 'node:util';

const USAGE = `usage: chatgate admin <command> [options]   (needs ADMIN_TOKEN; CHATGATE_URL defaults to http://127.0.0.1:$PORT)

  customers create --name NAME --plan free|starter|basic|pro [--default-country XX]
  customers get CUSTOMER_ID
  customers update CUSTOMER_ID [--name NAME] [--plan PLAN] [--default-country XX]
  accounts create CUSTOMER_ID --type OFFICIAL|DIRECT --phone +E164 --display-name NAME [account options]
  accounts update ACCOUNT_ID [account options]
  keys create CUSTOMER_ID [--sandbox] [--account ACCOUNT_ID] [--template-access none|read|manage] [--name NAME]
  keys list CUSTOMER_ID
  keys revoke KEY_ID
  users create CUSTOMER_ID --email EMAIL [--role owner|viewer]   (prints the one-time invitation link)
  users list CUSTOMER_ID
  users reset-password USER_ID   (ends the password and sessions; prints a new invitation link)
  users disable USER_ID

account options: --status S --phone-number-id ID --waba-id ID --access-token T --app-secret S
  --integration-id ID --management-token T --send-policy DISABLED|TEST|PRODUCTION|GLOBAL
  --test-recipient +E164 (repeatable) --throughput N --verified-name NAME`;

const OPTIONS = {
  name: { type: 'string' },
  plan: { type: 'string' },
  'default-country': { type: 'string' },
  type: { type: 'string' },
  phone: { type: 'string' },
  'display-name': { type: 'string' },
  status: { type: 'string' },
  'phone-number-id': { type: 'string' },
  'waba-id': { type: 'string' },
  'access-token': { type: 'string' },
  'app-secret': { type: 'string' },
  'integration-id': { type: 'string' },
  'management-token': { type: 'string' },
  'send-policy': { type: 'string' },
  'test-recipient': { type: 'string', multiple: true },
  throughput: { type: 'string' },
  'verified-name': { type: 'string' },
  sandbox: { type: 'boolean' },
  account: { type: 'string' },
  'template-access': { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function clean<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(o).filter(
      ([, v]) =>
        v !== undefined && !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
    ),
  ) as Partial<T>;
}

function accountBody(v: Values) {
  const official = clean({
    phoneNumberId: v['phone-number-id'],
    wabaId: v['waba-id'],
    accessToken: v['access-token'],
    appSecret: v['app-secret'],
    integrationId: v['integration-id'],
    managementToken: v['management-token'],
    verifiedName: v['verified-name'],
  });
  return clean({
    type: v.type,
    phoneNumber: v.phone,
    displayName: v['display-name'],
    status: v.status,
    official: Object.keys(official).length > 0 ? official : undefined,
    sendPolicy: v['send-policy'] ? clean({ mode: v['send-policy'], testRecipients: v['test-recipient'] }) : undefined,
    throughputMps: v.throughput !== undefined ? Number(v.throughput) : undefined,
  });
}

export async function runAdminCli(
  argv: string[],
  env: { baseUrl: string; adminToken: string | null },
): Promise<number> {
  const { values: v, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [group, command, id] = positionals;
  if (v.help || !group) {
    console.log(USAGE);
    return v.help ? 0 : 2;
  }
  if (!env.adminToken) {
    console.error('ADMIN_TOKEN is not set');
    return 2;
  }
  const routes: Record<string, () => [string, string, unknown?]> = {
    'customers create': () => [
      'POST',
      '/admin/customers',
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'customers get': () => ['GET', `/admin/customers/${id}`],
    'customers update': () => [
      'PATCH',
      `/admin/customers/${id}`,
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'accounts create': () => ['POST', `/admin/customers/${id}/chat-accounts`, accountBody(v)],
    'accounts update': () => ['PATCH', `/admin/chat-accounts/${id}`, accountBody(v)],
    'keys create': () => [
      'POST',
      `/admin/customers/${id}/api-keys`,
      clean({ sandbox: v.sandbox, chatAccountId: v.account, templateAccess: v['template-access'], name: v.name }),
    ],
    'keys list': () => ['GET', `/admin/customers/${id}/api-keys`],
    'keys revoke': () => ['DELETE', `/admin/api-keys/${id}`],
    'users create': () => ['POST', `/admin/customers/${id}/users`, clean({ email: v.email, role: v.role })],
    'users list': () => ['GET', `/admin/customers/${id}/users`],
    'users reset-password': () => ['POST', `/admin/portal-users/${id}/reset-password`],
    'users disable': () => ['POST', `/admin/portal-users/${id}/disable`],
  };
  const route = routes[`${group} ${command ?? ''}`];
  if (
    !route ||
    (command !== 'create' && group !== 'customers' && !id) ||
    (command !== 'create' && group === 'customers' && !id)
  ) {
    console.error(USAGE);
    return 2;
  }
  if (command === 'create' && group !== 'customers' && !id) {
    console.error('the customer id is required');
    return 2;
  }
  const [method, path, body] = route();
  let res: Response;
  try {
    res = await fetch(`${env.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${env.adminToken}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  } catch {
    console.error(`cannot reach the service at ${env.baseUrl} (is it running? set CHATGATE_URL or PORT)`);
    return 1;
  }
  const text = await res.text();
  if (text) console.log(text.startsWith('{') ? JSON.stringify(JSON.parse(text), null, 2) : text);
  else console.log(`${res.status} ${res.statusText}`);
  return res.ok ? 0 : 1;
}
