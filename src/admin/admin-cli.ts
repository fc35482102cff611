// `chatgate admin ...`: the operator API from a terminal. Lists and gets print tables (--json: the
// answer as JSON); other commands print the JSON answer; exits 1 on an error answer.
import { parseArgs } from 'node:util';

import { PAGED, VIEWS } from './admin-views.js';

const USAGE = `usage: chatgate admin <command> [options]   (needs ADMIN_TOKEN; CHATGATE_URL defaults to http://127.0.0.1:$PORT)

  customers create --name NAME --plan free|starter|basic|pro [--default-country XX]
  customers list [--search TEXT] [--plan PLAN] [--limit N] [--cursor C] [--all]
  customers get CUSTOMER_ID
  customers update CUSTOMER_ID [--name NAME] [--plan PLAN] [--default-country XX]
  accounts create CUSTOMER_ID --type OFFICIAL|DIRECT --phone +E164 --display-name NAME [account options]
  accounts update ACCOUNT_ID [account options]
  accounts list CUSTOMER_ID [--limit N] [--cursor C] [--all]
  usage CUSTOMER_ID [--month YYYY-MM]
  keys create CUSTOMER_ID [--sandbox] [--account ACCOUNT_ID] [--template-access none|read|manage] [--name NAME]
  keys list CUSTOMER_ID
  keys revoke KEY_ID
  users create CUSTOMER_ID --email EMAIL [--role owner|viewer]   (prints the one-time invitation link)
  users list CUSTOMER_ID
  users reset-password USER_ID   (ends the password and sessions; prints a new invitation link)
  users disable USER_ID
  rekey   (key rotation: re-seals every secret under the service's ENCRYPTION_KEY; docs/security.md)

account options: --status S --phone-number-id ID --waba-id ID --access-token T --app-secret S
  --integration-id ID --management-token T --send-policy DISABLED|TEST|PRODUCTION|GLOBAL
  --test-recipient +E164 (repeatable) --throughput N --verified-name NAME

lists, gets and usage print tables for people; --json prints the answer as JSON, for scripts.
--search is a case-insensitive part of the name; --all follows the cursors to the last page.`;

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
  search: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  month: { type: 'string' },
  json: { type: 'boolean' },
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
  // `usage CUSTOMER_ID` has no sub-command: its id is the second word.
  const [group, command, id] =
    positionals[0] === 'usage' || positionals[0] === 'rekey'
      ? [positionals[0], '', positionals[1]]
      : (positionals as (string | undefined)[]);
  if (v.help || !group) {
    console.log(USAGE);
    return v.help ? 0 : 2;
  }
  if (!env.adminToken) {
    console.error('ADMIN_TOKEN is not set');
    return 2;
  }
  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams(clean(params) as Record<string, string>).toString();
    return q ? `?${q}` : '';
  };
  const page = { limit: v.limit, cursor: v.cursor };
  const routes: Record<string, () => [string, string, unknown?]> = {
    'customers create': () => [
      'POST',
      '/admin/customers',
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'customers list': () => ['GET', `/admin/customers${query({ q: v.search, plan: v.plan, ...page })}`],
    'customers get': () => ['GET', `/admin/customers/${id}`],
    'customers update': () => [
      'PATCH',
      `/admin/customers/${id}`,
      clean({ name: v.name, plan: v.plan, defaultCountry: v['default-country'] }),
    ],
    'accounts create': () => ['POST', `/admin/customers/${id}/chat-accounts`, accountBody(v)],
    'accounts update': () => ['PATCH', `/admin/chat-accounts/${id}`, accountBody(v)],
    'accounts list': () => ['GET', `/admin/customers/${id}/chat-accounts${query(page)}`],
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
    usage: () => ['GET', `/admin/customers/${id}/usage${query({ month: v.month })}`],
    rekey: () => ['POST', '/admin/encryption/rekey'],
  };
  const name = group === 'usage' || group === 'rekey' ? group : `${group} ${command ?? ''}`;
  const route = routes[name];
  const needsId = name !== 'customers create' && name !== 'customers list' && name !== 'rekey';
  if (!route || (needsId && command !== 'create' && !id)) {
    console.error(USAGE);
    return 2;
  }
  if (needsId && !id) {
    console.error('the customer id is required');
    return 2;
  }
  const [method, path, body] = route();
  const request = async (url: string) =>
    fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${env.adminToken}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  let res: Response;
  let text: string;
  try {
    res = await request(`${env.baseUrl}${path}`);
    text = await res.text();
    const listField = PAGED[name];
    if (v.all && listField && res.ok) text = JSON.stringify(await followCursors(JSON.parse(text), listField));
  } catch (err) {
    if (err instanceof HttpError) {
      console.log(err.body);
      return 1;
    }
    console.error(`cannot reach the service at ${env.baseUrl} (is it running? set CHATGATE_URL or PORT)`);
    return 1;
  }
  const view = VIEWS[name];
  if (res.ok && view && !v.json && text) console.log(view(JSON.parse(text)));
  else if (text) console.log(text.startsWith('{') ? JSON.stringify(JSON.parse(text), null, 2) : text);
  else console.log(`${res.status} ${res.statusText}`);
  return res.ok ? 0 : 1;

  /** Every page of a paged list, merged into one answer. */
  async function followCursors(first: Record<string, unknown>, field: string) {
    const items = [...(first[field] as unknown[])];
    let cursor = first.nextCursor as string | null;
    while (cursor) {
      const url = new URL(`${env.baseUrl}${path}`);
      url.searchParams.set('cursor', cursor);
      const next = await request(url.toString());
      const nextText = await next.text();
      if (!next.ok) throw new HttpError(nextText);
      const answer = JSON.parse(nextText) as Record<string, unknown>;
      items.push(...(answer[field] as unknown[]));
      cursor = answer.nextCursor as string | null;
    }
    return { [field]: items, nextCursor: null };
  }
}

class HttpError extends Error {
  constructor(readonly body: string) {
    super('error answer');
  }
}
